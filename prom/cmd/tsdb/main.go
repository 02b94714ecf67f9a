// Command tsdb is isotsdb's command-line tool with the commands that need
// Prometheus's code: everything the root module's build (cmd/tsdb) has,
// plus
//
//	tsdb serve DIR [--listen ADDR] [--read-only]
//
// which serves Prometheus's HTTP API and remote-write receiver over the
// data directory (package serve).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/isotsdb/tsdb/cmd/tsdb/cli"
	"github.com/isotsdb/tsdb/prom/serve"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, serve.Command())
	stop()
	os.Exit(code)
}
