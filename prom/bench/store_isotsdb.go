package main

import (
	"context"
	"fmt"
	"time"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
	"github.com/prometheus/prometheus/storage"
)

// isoStore is isotsdb opened through its native API.
type isoStore struct {
	db    *tsdb.DB
	lsets []labels.Labels
	hsets []labels.Labels     // of the histogram series
	h     histogram.Histogram // reused by queryHistograms
	it    chunks.Iterator     // reused by query; query is called from one goroutine
	sink  float64
	open  openStats
	index map[string]int // series index by lsets[i].String(), built by the first scan
}

func openIsotsdb(cfg storeConfig) (*isoStore, error) {
	o := tsdb.DefaultOptions()
	o.IsolationDisabled = !cfg.isolation
	o.MinBlockDuration = time.Duration(cfg.blockRangeMs()) * time.Millisecond
	o.MaxBlockDuration = o.MinBlockDuration
	o.WALCompression = true
	o.OutOfOrderTimeWindow = cfg.lateWindow
	o.SnapshotOnShutdown = cfg.snapshotOnShutdown
	s := &isoStore{lsets: make([]labels.Labels, len(cfg.series))}
	for i, kv := range cfg.series {
		s.lsets[i] = labels.FromStrings(kv...)
	}
	s.hsets = make([]labels.Labels, len(cfg.hseries))
	for j, kv := range cfg.hseries {
		s.hsets[j] = labels.FromStrings(kv...)
	}
	var err error
	s.open, err = measureOpen(cfg.measureOpen, func() (err error) {
		s.db, err = tsdb.Open(cfg.dir, nil, nil, o)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: open isotsdb: %w", err)
	}
	return s, nil
}

type isoAppender struct {
	app   tsdb.Appender
	lsets []labels.Labels
	hsets []labels.Labels
}

func (s *isoStore) appender() appender {
	return &isoAppender{app: s.db.Appender(context.Background()), lsets: s.lsets, hsets: s.hsets}
}

func (a *isoAppender) append(ref uint64, i int, t int64, v float64) (uint64, error) {
	r, err := a.app.Append(tsdb.SeriesRef(ref), freshLabels(ref, a.lsets[i], labels.Labels.Clone), t, v)
	return uint64(r), err
}
func (a *isoAppender) appendHistogram(ref uint64, j int, t int64, h *histSample) (uint64, error) {
	r, err := a.app.AppendHistogram(tsdb.SeriesRef(ref), freshLabels(ref, a.hsets[j], labels.Labels.Clone), t, h.iso, nil)
	return uint64(r), err
}
func (a *isoAppender) commit() error   { return a.app.Commit() }
func (a *isoAppender) rollback() error { return a.app.Rollback() }

func (s *isoStore) matchers(q *query) []*labels.Matcher {
	if ms, ok := q.prepared[isotsdbStore].([]*labels.Matcher); ok {
		return ms
	}
	ms := make([]*labels.Matcher, len(q.matchers))
	for i, m := range q.matchers {
		t := labels.MatchEqual
		if m.regex {
			t = labels.MatchRegexp
		}
		ms[i] = labels.MustNewMatcher(t, m.name, m.value)
	}
	q.prepared[isotsdbStore] = ms
	return ms
}

func (s *isoStore) query(q *query, mint, maxt int64) (series, samples int, err error) {
	ms := s.matchers(q)
	qr, err := s.db.Querier(mint, maxt)
	if err != nil {
		return 0, 0, err
	}
	defer qr.Close()
	ss := qr.Select(context.Background(), ms...)
	sum := 0.0
	for ss.Next() {
		series++
		s.it = ss.At().Iterator(s.it)
		for s.it.Next() == chunks.ValFloat {
			_, v := s.it.At()
			sum += v
			samples++
		}
		if err := s.it.Err(); err != nil {
			return 0, 0, err
		}
	}
	s.sink += sum // keeps the reads from being optimised away
	return series, samples, ss.Err()
}

func (s *isoStore) queryHistograms(q *query, mint, maxt int64) (series, samples int, err error) {
	ms := s.matchers(q)
	qr, err := s.db.Querier(mint, maxt)
	if err != nil {
		return 0, 0, err
	}
	defer qr.Close()
	ss := qr.Select(context.Background(), ms...)
	var sum uint64
	for ss.Next() {
		series++
		s.it = ss.At().Iterator(s.it)
		var vt chunks.ValueType
		for vt = s.it.Next(); vt == chunks.ValHistogram; vt = s.it.Next() {
			_, h := s.it.AtHistogram(&s.h)
			sum += h.Count
			samples++
		}
		if err := s.it.Err(); err != nil {
			return 0, 0, err
		}
		if vt != chunks.ValNone {
			return 0, 0, fmt.Errorf("bench: %s: a sample of type %v among histograms", ss.At().Labels(), vt)
		}
	}
	s.sink += float64(sum)
	return series, samples, ss.Err()
}

func (s *isoStore) scan(q *query, mint, maxt int64, fn func(i int, t int64, v float64)) error {
	if s.index == nil {
		s.index = make(map[string]int, len(s.lsets))
		for i, ls := range s.lsets {
			s.index[ls.String()] = i
		}
	}
	qr, err := s.db.Querier(mint, maxt)
	if err != nil {
		return err
	}
	defer qr.Close()
	ss := qr.Select(context.Background(), s.matchers(q)...)
	for ss.Next() {
		ls := ss.At().Labels()
		i, ok := s.index[ls.String()]
		if !ok {
			return fmt.Errorf("bench: scan: series %s was never written", ls)
		}
		s.it = ss.At().Iterator(s.it)
		var vt chunks.ValueType
		for vt = s.it.Next(); vt == chunks.ValFloat; vt = s.it.Next() {
			t, v := s.it.At()
			fn(i, t, v)
		}
		if err := s.it.Err(); err != nil {
			return err
		}
		if vt != chunks.ValNone {
			return fmt.Errorf("bench: scan: %s: a sample of type %v among floats", ls, vt)
		}
	}
	return ss.Err()
}

func (s *isoStore) startQuery(mint, maxt int64) error {
	q, err := s.db.Querier(mint, maxt)
	if err != nil {
		return err
	}
	return q.Close()
}

func (s *isoStore) labelValues(name string, mint, maxt int64) ([]string, error) {
	q, err := s.db.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	return q.LabelValues(context.Background(), name)
}

func (s *isoStore) labelNames(mint, maxt int64) ([]string, error) {
	q, err := s.db.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	return q.LabelNames(context.Background())
}

func (s *isoStore) compact() error { return s.db.Compact(context.Background()) }

func (s *isoStore) blocks() []blockInfo {
	var out []blockInfo
	for _, m := range s.db.Blocks() {
		out = append(out, blockInfo{dir: s.db.Dir() + "/" + m.ULID.String(), samples: m.Stats.NumSamples})
	}
	return out
}

func (s *isoStore) opened() openStats { return s.open }

// queryable wraps the DB in the repository's Prometheus adapter (whose
// Close, which would close the DB, is never called).
func (s *isoStore) queryable() storage.Queryable { return promstorage.New(s.db) }

func (s *isoStore) close() error { return s.db.Close() }
