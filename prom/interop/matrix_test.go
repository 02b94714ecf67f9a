package interop

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
)

// matrix collects the outcome of every interop check for the summary that
// TestInterop logs. It is safe for concurrent use by parallel subtests.
type matrix struct {
	mu   sync.Mutex // protects rows
	rows []matrixRow
}

type matrixRow struct {
	direction, variant, part, result string
}

// check runs fn as subtest part of t and records whether it passed.
func (m *matrix) check(t *testing.T, direction, variant, part string, fn func(t *testing.T)) bool {
	return m.checkEach(t, direction, variant, part, func(t *testing.T, _ *cell) { fn(t) })
}

// checkEach is check for a part made of subtests run with cell.each: the
// matrix names the subtests that failed.
func (m *matrix) checkEach(t *testing.T, direction, variant, part string, fn func(t *testing.T, c *cell)) bool {
	c := &cell{}
	ok := t.Run(part, func(t *testing.T) { fn(t, c) })
	result := "pass"
	if !ok {
		result = "FAIL"
		if len(c.failed) > 0 {
			result += " (" + strings.Join(c.failed, ", ") + ")"
		}
	}
	m.add(direction, variant, part, result)
	return ok
}

// cell collects the names of the failed subtests of one matrix part.
type cell struct {
	failed []string // only appended to by the part's goroutine
}

// run runs fn as subtest name of t, remembering it if it fails; later
// subtests still run.
func (c *cell) run(t *testing.T, name string, fn func(t *testing.T)) {
	if !t.Run(name, fn) {
		c.failed = append(c.failed, name)
	}
}

// add records a row.
func (m *matrix) add(direction, variant, part, result string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = append(m.rows, matrixRow{direction, variant, part, result})
}

// String formats the matrix as a table, rows sorted.
func (m *matrix) String() string {
	m.mu.Lock()
	rows := slices.Clone(m.rows)
	m.mu.Unlock()
	slices.SortStableFunc(rows, func(a, b matrixRow) int {
		if c := strings.Compare(a.direction, b.direction); c != 0 {
			return c
		}
		return strings.Compare(a.variant, b.variant)
	})
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "direction\tvariant\tpart\tresult")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.direction, r.variant, r.part, r.result)
	}
	_ = w.Flush()
	return b.String()
}
