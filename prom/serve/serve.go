// Package serve is the tool's "tsdb serve DIR" command: Prometheus's HTTP
// API and remote-write receiver (package promweb) over an isotsdb
// database, plus the database's and Go's metrics on /metrics. Any
// Prometheus can then remote-write into the database, and Grafana, promtool
// or any other client of Prometheus's API can read from it.
//
// prom/cmd/tsdb builds the tool with this command; the root module's build
// of the tool (cmd/tsdb) cannot have it, since it needs Prometheus's code.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/isotsdb/tsdb"
	promweb "github.com/isotsdb/tsdb/prom/web"
)

// DefaultListen is the address Config.Listen defaults to, Prometheus's.
const DefaultListen = ":9090"

// shutdownTimeout bounds how long Serve waits for requests in progress
// once its context is done.
const shutdownTimeout = 30 * time.Second

// Config is what Serve serves.
type Config struct {
	// Dir is the database's data directory; it is created if absent
	// (unless ReadOnly).
	Dir string
	// Listen is the TCP address to listen on; "" means DefaultListen.
	// Ignored if Listener is set.
	Listen string
	// Listener, if set, is the listener to serve on (tests pass one on
	// 127.0.0.1:0); Serve closes it.
	Listener net.Listener
	// ReadOnly opens the database with tsdb.OpenReadOnly (no lock,
	// nothing written: it may be open in another process) and serves
	// the read API only: /api/v1/write answers 404 and the admin
	// endpoints "unavailable".
	ReadOnly bool
	// DB are the database's options; nil means tsdb.DefaultOptions().
	DB *tsdb.Options
	// API are the HTTP API's options (query timeout, max samples,
	// lookback); their Logger, Registerer and ReadOnly are set by Serve.
	API promweb.Options
	// Logger receives the database's and the API's logs; nil discards
	// them.
	Logger *slog.Logger
	// Ready, if set, is called with the address served once the database
	// is open and the listener accepts connections.
	Ready func(addr net.Addr)
}

// Serve opens the database, serves until ctx is done, then stops taking
// requests, waits for those in progress (at most 30 s) and closes the
// database. It returns nil after a shutdown that ctx asked for, and the
// error otherwise.
func Serve(ctx context.Context, c Config) (err error) {
	logger := c.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	ln := c.Listener
	if ln == nil {
		addr := c.Listen
		if addr == "" {
			addr = DefaultListen
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	defer func() {
		if ln != nil {
			ln.Close()
		}
	}()

	var db *tsdb.DB
	if c.ReadOnly {
		db, err = tsdb.OpenReadOnly(c.Dir, logger, c.DB)
	} else {
		db, err = tsdb.Open(c.Dir, logger, reg, c.DB)
	}
	if err != nil {
		return fmt.Errorf("serve: open %s: %w", c.Dir, err)
	}
	defer func() {
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("serve: close %s: %w", c.Dir, cerr))
		}
	}()

	apiOpts := c.API
	apiOpts.ReadOnly, apiOpts.Logger, apiOpts.Registerer = c.ReadOnly, logger, reg
	api, err := promweb.New(db, apiOpts)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.Handle("/", api)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}

	l := ln
	ln = nil // the server owns it now
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	logger.Info("serving", "dir", c.Dir, "addr", l.Addr().String(), "read_only", c.ReadOnly)
	if c.Ready != nil {
		c.Ready(l.Addr())
	}
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	return nil
}
