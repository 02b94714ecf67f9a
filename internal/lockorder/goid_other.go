//go:build invariants && !amd64

package lockorder

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// goroutineKey identifies the calling goroutine: its id, where no cheaper
// way is written (goid_amd64.go).
func goroutineKey() uint64 { return goroutineID() }

// goroutineID returns the calling goroutine's id, parsed from the first
// line of its stack trace ("goroutine 18 [running]:"). Only builds with
// the tag invariants pay for it.
func goroutineID() uint64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("lockorder: cannot parse goroutine id from %q", s))
	}
	return id
}
