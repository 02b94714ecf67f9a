package remote

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests with a goroutine-leak check, or, in a child
// process started by startChild, a remote-write receiver (childMain).
func TestMain(m *testing.M) {
	if code, ok := childFromEnv(); ok {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m,
		// httptest servers' idle connections close asynchronously.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
	)
}
