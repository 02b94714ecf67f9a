// Command tsdb-ship uploads the blocks of an isotsdb (or Prometheus) data
// directory to object storage for Thanos or Mimir:
//
//	tsdb-ship upload DIR --objstore.config-file=bucket.yml [--external-label=k=v]... [--upload-compacted]
//
// Exit codes: 0 on success, 1 if any block failed to upload, 2 for a bad
// command line.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/alecthomas/kingpin/v2"

	"github.com/isotsdb/tsdb/ship/cli"
)

const (
	exitOK    = 0
	exitError = 1 // as upload's Run returns
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit code; it never
// exits the process, so tests can call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := kingpin.New("tsdb-ship", "Ship isotsdb blocks to object storage.")
	app.UsageWriter(stdout).ErrorWriter(stderr)
	terminated, termCode := false, exitOK
	app.Terminate(func(code int) { // after --help: return instead of exiting
		if !terminated {
			terminated, termCode = true, code
		}
	})
	upload := cli.Command()
	uploadCmd := upload.Register(app)
	cmd, err := app.Parse(args)
	if terminated {
		return termCode
	}
	if err != nil {
		fmt.Fprintf(stderr, "tsdb-ship: %v (try --help)\n", err)
		return exitUsage
	}
	if cmd == uploadCmd.FullCommand() {
		return upload.Run(ctx, stdout, stderr)
	}
	fmt.Fprintf(stderr, "tsdb-ship: unknown command %q (try --help)\n", cmd)
	return exitUsage
}
