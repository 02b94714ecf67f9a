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

	"github.com/isotsdb/tsdb/ship"
)

// ErrBadLabel is returned (wrapped) for an --external-label that is not
// name=value.
var ErrBadLabel = errors.New("cli: external label must be name=value")

// Upload is the "upload" command registered on an application. Its fields
// are filled by kingpin's Parse; call Run when Parse returns the command's
// FullCommand.
type Upload struct {
	cmd             *kingpin.CmdClause
	dir             string
	configFile      string
	labels          []string
	uploadCompacted bool
	source          string
}

// Register adds the "upload" command to app and returns it:
//
//	upload DIR --objstore.config-file=F [--external-label=k=v]... [--upload-compacted]
func Register(app *kingpin.Application) *Upload {
	u := &Upload{}
	u.cmd = app.Command("upload", "Upload the blocks of a data directory not shipped yet to object storage, "+
		"in the layout Thanos and Mimir read, and record them in DIR/"+ship.ShipperFile+".")
	u.cmd.Arg("dir", "Data directory.").Required().StringVar(&u.dir)
	u.cmd.Flag("objstore.config-file", "Object storage configuration (YAML: type: S3|GCS|AZURE|FILESYSTEM, config: ...).").
		Required().StringVar(&u.configFile)
	u.cmd.Flag("external-label", "Label name=value for the thanos section of each block's meta.json; repeatable.").
		StringsVar(&u.labels)
	u.cmd.Flag("upload-compacted", "Upload compacted blocks too, not only level-1 blocks.").BoolVar(&u.uploadCompacted)
	u.cmd.Flag("source", "thanos.source written in meta.json.").Default(ship.DefaultSource).StringVar(&u.source)
	return u
}

// FullCommand is the name kingpin's Parse returns for this command.
func (u *Upload) FullCommand() string { return u.cmd.FullCommand() }

// Run uploads the blocks, drawing a progress bar on stderr when it is a
// terminal, and prints a summary line to stdout.
func (u *Upload) Run(ctx context.Context, stdout, stderr io.Writer) error {
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
