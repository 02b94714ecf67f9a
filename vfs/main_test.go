package vfs

import (
	"io"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// lockHolderEnv, when set, names a lock file that the test binary should
// hold instead of running tests; TestOSLockAcrossProcesses uses it to get a
// second process holding a lock.
const lockHolderEnv = "VFS_TEST_HOLD_LOCK"

func TestMain(m *testing.M) {
	if name := os.Getenv(lockHolderEnv); name != "" {
		os.Exit(holdLock(name))
	}
	goleak.VerifyTestMain(m)
}

// holdLock takes the lock on name, prints "locked", and holds the lock until
// stdin is closed. It returns the process exit code.
func holdLock(name string) int {
	l, err := OS().Lock(name)
	if err != nil {
		_, _ = os.Stdout.WriteString("error: " + err.Error() + "\n")
		return 1
	}
	_, _ = os.Stdout.WriteString("locked\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := l.Close(); err != nil {
		return 1
	}
	return 0
}
