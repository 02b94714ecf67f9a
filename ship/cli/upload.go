package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	toolcli "github.com/isotsdb/tsdb/cmd/tsdb/cli"
	"github.com/isotsdb/tsdb/ship"
)

// ErrBadLabel is returned (wrapped) for an --external-label that is not
// name=value.
var ErrBadLabel = errors.New("cli: external label must be name=value")

// Exit codes, the tool's (cmd/tsdb/cli).
const (
	exitOK    = 0
	exitError = 1
)

// upload is the "upload" command. Its fields are filled by kingpin's
// Parse of the application Register declared it on; name is that
// application's, for error messages.
type upload struct {
	name            string
	dir             string
	configFile      string
	labels          []string
	uploadCompacted bool
	source          string
}

// Command returns the "upload" command for a kingpin application, in the
// form of the tool's commands (cmd/tsdb/cli.Command), so that cli.Run of
// prom/cmd/tsdb and any other application can offer it:
//
//	upload DIR --objstore.config-file=F [--external-label=k=v]... [--upload-compacted] [--source=S]
//
// Its Run returns 0 once every pending block is shipped and 1 when
// anything failed (a bad label, config or bucket, or a block that did
// not go up), after printing the error to stderr.
func Command() toolcli.Command { return &upload{} }

// Register implements cmd/tsdb/cli.Command.
func (u *upload) Register(app *kingpin.Application) *kingpin.CmdClause {
	u.name = app.Name
	cmd := app.Command("upload", "Upload the blocks of a data directory not shipped yet to object storage, "+
		"in the layout Thanos and Mimir read, and record them in DIR/"+ship.ShipperFile+".")
	cmd.Arg("dir", "Data directory.").Required().StringVar(&u.dir)
	cmd.Flag("objstore.config-file", "Object storage configuration (YAML: type: S3|GCS|AZURE|FILESYSTEM, config: ...).").
		Required().StringVar(&u.configFile)
	cmd.Flag("external-label", "Label name=value for the thanos section of each block's meta.json; repeatable.").
		StringsVar(&u.labels)
	cmd.Flag("upload-compacted", "Upload compacted blocks too, not only level-1 blocks.").BoolVar(&u.uploadCompacted)
	cmd.Flag("source", "thanos.source written in meta.json.").Default(ship.DefaultSource).StringVar(&u.source)
	return cmd
}

// Run implements cmd/tsdb/cli.Command: it uploads the blocks, drawing a
// progress bar on stderr when it is a terminal, prints a summary line to
// stdout and any error to stderr.
func (u *upload) Run(ctx context.Context, stdout, stderr io.Writer) int {
	if err := u.run(ctx, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "%s upload: %v\n", u.name, err)
		return exitError
	}
	return exitOK
}

// run is Run returning the error.
func (u *upload) run(ctx context.Context, stdout, stderr io.Writer) error {
	labels, err := parseLabels(u.labels)
	if err != nil {
		return err
	}
	conf, err := os.ReadFile(u.configFile)
	if err != nil {
		return fmt.Errorf("read objstore config: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	bkt, err := ship.NewBucket(conf, logger)
	if err != nil {
		return fmt.Errorf("%s: %w", u.configFile, err)
	}
	defer bkt.Close()

	var done atomic.Int64
	s, err := ship.New(u.dir, bkt, &ship.Options{
		ExternalLabels:  labels,
		Source:          u.source,
		UploadCompacted: u.uploadCompacted,
		Logger:          logger,
		Progress:        func(n int64) { done.Add(n) },
	})
	if err != nil {
		return err
	}
	blocks, total, err := s.PendingBytes()
	if err != nil {
		return err
	}
	stopBar := startBar(&done, total, stderr)
	start := time.Now()
	n, err := s.Sync(ctx)
	stopBar()
	elapsed := time.Since(start)
	fmt.Fprintf(stdout, "uploaded %d of %d blocks, %s in %s (%.1f MB/s)\n", n, blocks,
		formatBytes(done.Load()), elapsed.Round(time.Millisecond), float64(done.Load())/1e6/max(elapsed.Seconds(), 1e-9))
	return err
}

// parseLabels turns name=value strings into a map.
func parseLabels(ss []string) (map[string]string, error) {
	m := make(map[string]string, len(ss))
	for _, s := range ss {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: %q", ErrBadLabel, s)
		}
		m[k] = v
	}
	return m, nil
}

// barInterval is how often the progress bar is redrawn: smooth to the
// eye, and cheap next to an upload.
const barInterval = 100 * time.Millisecond

// startBar draws the bytes uploaded so far out of total on w while w is a
// terminal (elsewhere it draws nothing), until the returned func is called.
func startBar(done *atomic.Int64, total int64, w io.Writer) (stop func()) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || total == 0 {
		return func() {}
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("uploading"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(barInterval),
		progressbar.OptionClearOnFinish(),
	)
	stopc, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(barInterval)
		defer tick.Stop()
		for {
			_ = bar.Set64(done.Load()) // a failed write to stderr only loses progress
			select {
			case <-stopc:
				_ = bar.Finish()
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(stopc); <-finished }
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
