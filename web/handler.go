package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
)

// Options configure the handler.
type Options struct {
	// EnableAdmin enables the admin endpoints (snapshot, delete_series,
	// clean_tombstones); without it they answer errorType "unavailable".
	EnableAdmin bool
	// Logger receives a line per admin action and per failed request; nil
	// discards.
	Logger *slog.Logger
	// SnapshotDir is the directory snapshots are created in, each in a
	// subdirectory named <UTC time>-<random hex>. Default: the snapshots
	// directory of the data directory, as in Prometheus.
	SnapshotDir string
}

// defaultStatusLimit is how many entries each list of /status/tsdb has
// without a limit parameter, as in Prometheus.
const defaultStatusLimit = 10

// NewHandler returns the HTTP handler of the API, serving the paths listed
// in the package documentation (mount it at the server's root). It is safe
// for concurrent use; requests run concurrently against db.
func NewHandler(db AdminDB, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SnapshotDir == "" {
		opts.SnapshotDir = filepath.Join(db.Dir(), "snapshots")
	}
	h := &handler{db: db, opts: opts, logger: opts.Logger}
	h.routes = map[string]route{
		"/api/v1/admin/tsdb/snapshot":         {methods: []string{http.MethodPost, http.MethodPut}, admin: true, fn: h.snapshot},
		"/api/v1/admin/tsdb/delete_series":    {methods: []string{http.MethodPost, http.MethodPut}, admin: true, fn: h.deleteSeries},
		"/api/v1/admin/tsdb/clean_tombstones": {methods: []string{http.MethodPost, http.MethodPut}, admin: true, fn: h.cleanTombstones},
		"/api/v1/status/tsdb":                 {methods: []string{http.MethodGet}, fn: h.tsdbStatus},
	}
	return h
}

// handler serves the API. Its fields are set by NewHandler and only read
// afterwards.
type handler struct {
	db     AdminDB
	opts   Options
	logger *slog.Logger
	routes map[string]route
}

// route is one endpoint.
type route struct {
	methods []string
	admin   bool // answers only with Options.EnableAdmin
	// fn returns the response data (nil for 204 No Content) or an error.
	fn func(r *http.Request) (any, *apiError)
}

// ServeHTTP routes r by path and method, checks that admin endpoints are
// enabled and writes the endpoint's answer in the JSON envelope.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, ok := h.routes[r.URL.Path]
	if !ok {
		respondError(w, h.logger, &apiError{typ: errorNotFound, status: http.StatusNotFound,
			err: fmt.Errorf("no endpoint %s", r.URL.Path)})
		return
	}
	if !slices.Contains(rt.methods, r.Method) {
		allowed := strings.Join(rt.methods, ", ")
		w.Header().Set("Allow", allowed)
		respondError(w, h.logger, &apiError{typ: errorBadData, status: http.StatusMethodNotAllowed,
			err: fmt.Errorf("method %s not allowed for %s (allowed: %s)", r.Method, r.URL.Path, allowed)})
		return
	}
	if rt.admin && !h.opts.EnableAdmin {
		respondError(w, h.logger, adminDisabled())
		return
	}
	data, apiErr := rt.fn(r)
	if apiErr != nil {
		if apiErr.typ == errorInternal {
			h.logger.Error("web: request failed", "path", r.URL.Path, "err", apiErr.err)
		}
		respondError(w, h.logger, apiErr)
		return
	}
	respond(w, h.logger, data)
}
