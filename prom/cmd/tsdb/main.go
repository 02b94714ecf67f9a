// Command tsdb is isotsdb's command-line tool with the commands that need
// Prometheus's code: everything the root module's build (cmd/tsdb) has,
// plus
//
//	tsdb serve DIR [--listen ADDR] [--read-only]
//
// which serves Prometheus's HTTP API and remote-write receiver over the
// data directory (package serve), and
//
//	tsdb upload DIR --objstore.config-file F [--external-label k=v]... [--upload-compacted]
//
// which uploads the blocks of the data directory not shipped yet to object
// storage, for Thanos or Mimir (ship/cli, on the shipper of the nested
// module ship/).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/isotsdb/tsdb/cmd/tsdb/cli"
	"github.com/isotsdb/tsdb/prom/serve"
	shipcli "github.com/isotsdb/tsdb/ship/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, commands()...)
	stop()
	os.Exit(code)
}

// commands are the commands this build adds to cli.Run's built-in ones,
// new on every call (a command holds its parsed flags).
func commands() []cli.Command {
	return []cli.Command{serve.Command(), shipcli.Command()}
}
