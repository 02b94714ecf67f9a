//go:build !unix

package cli

import "time"

// processCPUTime reports false: getrusage is not available here, and the
// report shows the CPU figure as unknown.
func processCPUTime() (time.Duration, bool) { return 0, false }
