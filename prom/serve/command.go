package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/model"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/cmd/tsdb/cli"
)

// Exit codes, the tool's.
const (
	exitOK    = 0
	exitError = 1
)

// command is "tsdb serve".
type command struct {
	c         Config
	retention model.Duration
	oooWindow time.Duration
}

// Command returns "tsdb serve DIR [--listen ADDR] [--read-only]" for the
// tool (cli.Run).
func Command() cli.Command { return &command{} }

// Register implements cli.Command.
func (s *command) Register(app *kingpin.Application) *kingpin.CmdClause {
	cmd := app.Command("serve", "Serve Prometheus's HTTP API (/api/v1/...), its remote-write receiver (/api/v1/write) "+
		"and metrics (/metrics) over a data directory, until interrupted.")
	cmd.Arg("dir", "Data directory (created if absent).").Required().StringVar(&s.c.Dir)
	cmd.Flag("listen", "Address to listen on.").Default(DefaultListen).StringVar(&s.c.Listen)
	cmd.Flag("read-only", "Open the directory read-only (no lock, nothing written, so another process may have it open) "+
		"and serve the read API only.").BoolVar(&s.c.ReadOnly)
	cmd.Flag("retention", "How long data is kept (Options.RetentionDuration).").Default("15d").
		SetValue(&s.retention)
	cmd.Flag("ooo-window", "Out-of-order window: how far behind the newest sample late samples are accepted "+
		"(Options.OutOfOrderTimeWindow; 0: off).").Default("0s").DurationVar(&s.oooWindow)
	cmd.Flag("query.timeout", "Maximum time a query may take.").Default("2m").DurationVar(&s.c.API.QueryTimeout)
	cmd.Flag("query.max-samples", "Maximum number of samples a query may hold in memory at once.").
		Default("50000000").IntVar(&s.c.API.MaxSamples)
	return cmd
}

// Run implements cli.Command.
func (s *command) Run(ctx context.Context, stdout, stderr io.Writer) int {
	o := tsdb.DefaultOptions()
	o.RetentionDuration = time.Duration(s.retention)
	o.OutOfOrderTimeWindow = s.oooWindow
	s.c.DB = o
	s.c.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	if err := Serve(ctx, s.c); err != nil {
		fmt.Fprintf(stderr, "tsdb serve: %v\n", err)
		return exitError
	}
	return exitOK
}
