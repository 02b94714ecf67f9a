package promweb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/route"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/features"
	"github.com/prometheus/prometheus/util/notifications"
	v1 "github.com/prometheus/prometheus/web/api/v1"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// Defaults of Options, Prometheus's flag defaults.
const (
	DefaultQueryTimeout  = 2 * time.Minute // --query.timeout
	DefaultMaxSamples    = 50_000_000      // --query.max-samples
	DefaultLookbackDelta = 5 * time.Minute // --query.lookback-delta
	// noStepSubqueryInterval is the step of a subquery that gives none:
	// Prometheus's default global evaluation_interval.
	noStepSubqueryInterval = time.Minute
)

// Options configures New. The zero value serves everything, with
// Prometheus's defaults.
type Options struct {
	// ReadOnly turns off everything that changes the DB: the
	// remote-write receiver (/api/v1/write then answers 404) and the
	// admin endpoints (they fail with errorType "unavailable").
	ReadOnly bool
	// QueryTimeout bounds each query's evaluation; 0 means
	// DefaultQueryTimeout.
	QueryTimeout time.Duration
	// MaxSamples is the most samples a query may hold in memory at once;
	// 0 means DefaultMaxSamples.
	MaxSamples int
	// LookbackDelta is how far back an instant selector looks for a
	// sample; 0 means DefaultLookbackDelta.
	LookbackDelta time.Duration
	// Logger receives the API's and the query engine's logs; nil
	// discards them.
	Logger *slog.Logger
	// Registerer receives the metrics of the query engine and the
	// remote-write receiver; nil registers nothing. If it is also a
	// prometheus.Gatherer, /api/v1/status/tsdb reads the head chunk count
	// from it as Prometheus does (prometheus_tsdb_head_chunks).
	Registerer prometheus.Registerer
}

// New returns an http.Handler serving Prometheus's HTTP API under
// /api/v1/ over db (see the package documentation for the endpoints).
// The handler does not own db: closing db is the caller's business, after
// the handler's last request. Each call builds its own engine and API, so
// several handlers may serve one DB; they must not share a Registerer
// (their metrics would collide).
func New(db *tsdb.DB, opts Options) (http.Handler, error) {
	if db == nil {
		return nil, errors.New("promweb: nil DB")
	}
	s := promstorage.New(db)
	c := apiConfig{
		queryable: s,
		exemplars: s,
		admin:     adminStats{db: db},
		dbDir:     db.Dir(),
		opts:      opts,
	}
	if !opts.ReadOnly {
		c.appendable = s
	}
	h, err := newHandler(c)
	if err != nil {
		return nil, err
	}
	return metadataHandler{db: db, next: h}, nil
}

// apiConfig is what newHandler builds Prometheus's API from. The tests
// build Prometheus's own TSDB's API with it too, so that both are made
// the same way.
type apiConfig struct {
	queryable storage.SampleAndChunkQueryable
	exemplars storage.ExemplarQueryable
	// appendable receives remote writes (its AppenderV2s must be
	// storage.ExemplarAppenderV2s, as Prometheus's receiver requires); nil
	// turns the receiver and the admin endpoints off.
	appendable storage.AppendableV2
	admin      v1.TSDBAdminStats
	dbDir      string
	opts       Options
}

// acceptedMessages are the remote-write messages /api/v1/write accepts:
// 1.0's prometheus.WriteRequest and 2.0's io.prometheus.write.v2.Request,
// as Prometheus's receiver with both enabled.
var acceptedMessages = remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}

// newHandler builds Prometheus's v1 API from c and routes /api/v1/ to it.
func newHandler(c apiConfig) (http.Handler, error) {
	o := c.opts
	switch {
	case o.QueryTimeout < 0:
		return nil, fmt.Errorf("promweb: negative query timeout %v", o.QueryTimeout)
	case o.MaxSamples < 0:
		return nil, fmt.Errorf("promweb: negative max samples %d", o.MaxSamples)
	case o.LookbackDelta < 0:
		return nil, fmt.Errorf("promweb: negative lookback delta %v", o.LookbackDelta)
	}
	if o.QueryTimeout == 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	if o.MaxSamples == 0 {
		o.MaxSamples = DefaultMaxSamples
	}
	if o.LookbackDelta == 0 {
		o.LookbackDelta = DefaultLookbackDelta
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	gatherer := prometheus.Gatherer(prometheus.NewRegistry())
	if g, ok := o.Registerer.(prometheus.Gatherer); ok {
		gatherer = g
	}
	engine := promql.NewEngine(promql.EngineOpts{
		Logger:        logger.With("component", "query engine"),
		Reg:           o.Registerer,
		MaxSamples:    o.MaxSamples,
		Timeout:       o.QueryTimeout,
		LookbackDelta: o.LookbackDelta,
		NoStepSubqueryIntervalFn: func(int64) int64 {
			return noStepSubqueryInterval.Milliseconds()
		},
		EnableAtModifier:     true,
		EnableNegativeOffset: true,
	})
	writable := c.appendable != nil
	start := time.Now()
	api := v1.NewAPI(
		engine,
		c.queryable,
		c.appendable,
		c.exemplars,
		func(context.Context) v1.ScrapePoolsRetriever { return noScrapes{} },
		func(context.Context) v1.TargetRetriever { return noScrapes{} },
		func(context.Context) v1.AlertmanagerRetriever { return noAlerting{} },
		func() config.Config { return config.Config{} },
		flags(o, writable),
		v1.GlobalURLOptions{},
		func(f http.HandlerFunc) http.HandlerFunc { return f }, // always ready
		c.admin,
		c.dbDir,
		writable, // admin endpoints
		false, 0, // search endpoints (experimental in Prometheus)
		logger,
		func(context.Context) v1.RulesRetriever { return noAlerting{} },
		0, 0, 0, // remote read: no sample, concurrency or frame limits
		false, // not an agent
		nil,   // no CORS origin
		func() (v1.RuntimeInfo, error) { return runtimeInfo(start), nil },
		buildInfo(),
		func() []notifications.Notification { return []notifications.Notification{} },
		func() (<-chan notifications.Notification, func(), bool) { return nil, func() {}, false },
		gatherer,
		o.Registerer,
		nil, // default stats renderer
		writable,
		acceptedMessages,
		false, false, false, // OTLP receiver off
		o.LookbackDelta,
		false, // no type-and-unit labels
		true,  // store remote write 2.0's metadata (opts.Metadata of each append)
		nil,   // Prometheus's error codes
		features.NewRegistry(),
		v1.OpenAPIOptions{},
		nil, // Prometheus's PromQL parser
		false,
		o.QueryTimeout,
	)
	r := route.New()
	api.Register(r.WithPrefix("/api/v1"))
	return r, nil
}
