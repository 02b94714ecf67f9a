// Command tsdb is isotsdb's command-line tool, as the root module builds
// it; see package cli for its commands. prom/cmd/tsdb builds the same
// tool with the commands that need Prometheus's code (serve) added.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/isotsdb/tsdb/cmd/tsdb/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
