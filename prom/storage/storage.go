package promstorage

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/exemplar"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// Storage is an isotsdb DB seen as a Prometheus storage.Storage. It is safe
// for concurrent use by multiple goroutines, as the DB is.
type Storage struct {
	db *tsdb.DB
}

var (
	_ storage.Storage           = (*Storage)(nil)
	_ storage.ExemplarQueryable = (*Storage)(nil)
)

// New returns a Storage over db. The Storage takes ownership of db: its
// Close closes db.
func New(db *tsdb.DB) *Storage { return &Storage{db: db} }

// DB returns the underlying database.
func (s *Storage) DB() *tsdb.DB { return s.db }

// Querier implements storage.Queryable. The Querier reads one snapshot of
// the DB, taken now: it sees exactly the commits completed before this call,
// in [mint, maxt] (inclusive).
func (s *Storage) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := s.db.Querier(mint, maxt)
	if err != nil {
		return nil, fmt.Errorf("promstorage: querier: %w", err)
	}
	return &querier{q: q, mint: mint, maxt: maxt}, nil
}

// ChunkQuerier implements storage.ChunkQueryable, with the same snapshot
// semantics as Querier. Its chunks are encoded from the samples on the fly
// (isotsdb does not hand out its own chunks): XOR chunks for floats,
// histogram and float-histogram chunks for native histograms, cut where the
// type changes. It costs more than Querier; it exists for remote read and
// other chunk consumers.
func (s *Storage) ChunkQuerier(mint, maxt int64) (storage.ChunkQuerier, error) {
	q, err := s.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	return chunkQuerier{q.(*querier)}, nil
}

// ExemplarQuerier implements storage.ExemplarQueryable: the querier sees
// the exemplars of exactly the commits completed before this call
// (tsdb.DB.ExemplarQuerier). It needs no Close.
func (s *Storage) ExemplarQuerier(ctx context.Context) (storage.ExemplarQuerier, error) {
	q, err := s.db.ExemplarQuerier(ctx)
	if err != nil {
		return nil, fmt.Errorf("promstorage: exemplar querier: %w", err)
	}
	return exemplarQuerier{q: q}, nil
}

// exemplarQuerier is a tsdb.ExemplarQuerier seen as Prometheus's.
type exemplarQuerier struct{ q tsdb.ExemplarQuerier }

// Select implements storage.ExemplarQuerier: the exemplars with times in
// [start, end] of the series matching all matchers of at least one set,
// per series in time order, the series sorted by labels.
func (q exemplarQuerier) Select(start, end int64, matchers ...[]*plabels.Matcher) ([]exemplar.QueryResult, error) {
	sets := make([][]*labels.Matcher, len(matchers))
	for i, ms := range matchers {
		var err error
		if sets[i], err = toOurMatchers(ms); err != nil {
			return nil, err
		}
	}
	res, err := q.q.Select(start, end, sets...)
	if err != nil {
		return nil, fmt.Errorf("promstorage: select exemplars: %w", err)
	}
	out := make([]exemplar.QueryResult, len(res))
	var b plabels.ScratchBuilder
	for i, r := range res {
		out[i].SeriesLabels = toPromLabels(&b, r.SeriesLabels)
		out[i].Exemplars = make([]exemplar.Exemplar, len(r.Exemplars))
		for j, e := range r.Exemplars {
			out[i].Exemplars[j] = exemplar.Exemplar{Labels: toPromLabels(&b, e.Labels), Value: e.Value, Ts: e.Ts, HasTs: e.HasTs}
		}
	}
	return out, nil
}

// Appender implements storage.Appendable: the returned Appender is one
// isotsdb transaction.
func (s *Storage) Appender(ctx context.Context) storage.Appender {
	return &appender{base: newBase(s.db.Appender(ctx))}
}

// AppenderV2 implements storage.AppendableV2: the returned AppenderV2 is
// one isotsdb transaction.
func (s *Storage) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return &appenderV2{base: newBase(s.db.Appender(ctx))}
}

// StartTime implements storage.Storage: the time of the oldest sample in
// the DB, math.MaxInt64 if it holds none.
func (s *Storage) StartTime() (int64, error) {
	start := s.db.Head().MinTime()
	if bs := s.db.Blocks(); len(bs) > 0 {
		start = min(start, bs[0].MinTime)
	}
	return start, nil
}

// ApplyConfig applies what isotsdb has of a Prometheus configuration, as
// Prometheus's own TSDB does on a configuration reload: the out-of-order
// time window (storage.tsdb.out_of_order_time_window, which Prometheus
// parses into conf.StorageConfig.TSDBConfig.OutOfOrderTimeWindow, in
// milliseconds) goes to DB.SetOutOfOrderTimeWindow. A nil TSDBConfig turns
// late samples off, as it does in Prometheus. The exemplar limit
// (storage.exemplars.max_exemplars, conf.StorageConfig.ExemplarsConfig)
// goes to DB.SetMaxExemplars, which resizes the exemplar ring keeping the
// newest, as Prometheus's head does on a reload; a nil ExemplarsConfig
// leaves the limit as it is. (Prometheus applies it only with its
// exemplar-storage feature on; isotsdb has no such switch, so note that
// Prometheus's default configuration sets 100,000, turning exemplars on.)
// The rest of the configuration is ignored. Appenders opened afterwards use the new window. It fails
// (wrapping tsdb.ErrClosed or tsdb.ErrReadOnly) if the DB is closed or
// read-only. Safe for concurrent use, also with appends and queries.
//
// To open a DB with the window Prometheus's tsdb.Options would have, set
// tsdb.Options.OutOfOrderTimeWindow to
// time.Duration(promOpts.OutOfOrderTimeWindow) * time.Millisecond.
func (s *Storage) ApplyConfig(conf *config.Config) error {
	var window int64 // ms
	if conf != nil && conf.StorageConfig.TSDBConfig != nil {
		window = conf.StorageConfig.TSDBConfig.OutOfOrderTimeWindow
	}
	// Clamped so that the conversion to a Duration cannot overflow.
	window = min(max(window, 0), int64(math.MaxInt64/time.Millisecond))
	if err := s.db.SetOutOfOrderTimeWindow(time.Duration(window) * time.Millisecond); err != nil {
		return fmt.Errorf("promstorage: apply config: %w", err)
	}
	if conf != nil && conf.StorageConfig.ExemplarsConfig != nil {
		if err := s.db.SetMaxExemplars(conf.StorageConfig.ExemplarsConfig.MaxExemplars); err != nil {
			return fmt.Errorf("promstorage: apply config: %w", err)
		}
	}
	return nil
}

// Close implements storage.Storage: it closes the DB. Calling it again
// does nothing.
func (s *Storage) Close() error { return s.db.Close() }
