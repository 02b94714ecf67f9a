package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/util/compression"
)

// promStore is Prometheus's TSDB (the version in go.mod) through its
// native API, configured as a Prometheus server configures it except for
// the block range, which both stores share.
type promStore struct {
	db    *promtsdb.DB
	lsets []labels.Labels
	hsets []labels.Labels     // of the histogram series
	h     histogram.Histogram // reused by queryHistograms
	it    chunkenc.Iterator
	sink  float64
	open  openStats
	index map[string]int // series index by lsets[i].String(), built by the first scan
}

func openPrometheus(cfg storeConfig) (*promStore, error) {
	o := promtsdb.DefaultOptions()
	o.IsolationDisabled = !cfg.isolation
	o.MinBlockDuration = cfg.blockRangeMs()
	o.MaxBlockDuration = o.MinBlockDuration
	o.WALCompression = compression.Snappy
	// Milliseconds, as all of Prometheus's TSDB times. Native histograms
	// need nothing more: out-of-order histograms are always on in v0.316.
	o.OutOfOrderTimeWindow = cfg.lateWindow.Milliseconds()
	s := &promStore{lsets: make([]labels.Labels, len(cfg.series))}
	for i, kv := range cfg.series {
		s.lsets[i] = labels.FromStrings(kv...)
	}
	s.hsets = make([]labels.Labels, len(cfg.hseries))
	for j, kv := range cfg.hseries {
		s.hsets[j] = labels.FromStrings(kv...)
	}
	var err error
	s.open, err = measureOpen(cfg.measureOpen, func() (err error) {
		s.db, err = promtsdb.Open(cfg.dir, nil, nil, o, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: open prometheus: %w", err)
	}
	return s, nil
}

type promAppender struct {
	app   storage.Appender
	lsets []labels.Labels
	hsets []labels.Labels
}

func (s *promStore) appender() appender {
	return &promAppender{app: s.db.Appender(context.Background()), lsets: s.lsets, hsets: s.hsets}
}

func (a *promAppender) append(ref uint64, i int, t int64, v float64) (uint64, error) {
	r, err := a.app.Append(storage.SeriesRef(ref), freshLabels(ref, a.lsets[i], labels.Labels.Copy), t, v)
	return uint64(r), err
}
func (a *promAppender) appendHistogram(ref uint64, j int, t int64, h *histSample) (uint64, error) {
	r, err := a.app.AppendHistogram(storage.SeriesRef(ref), freshLabels(ref, a.hsets[j], labels.Labels.Copy), t, h.prom, nil)
	return uint64(r), err
}
func (a *promAppender) commit() error   { return a.app.Commit() }
func (a *promAppender) rollback() error { return a.app.Rollback() }

func (s *promStore) matchers(q *query) []*labels.Matcher {
	if ms, ok := q.prepared[prometheusStore].([]*labels.Matcher); ok {
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
	q.prepared[prometheusStore] = ms
	return ms
}

func (s *promStore) query(q *query, mint, maxt int64) (series, samples int, err error) {
	ms := s.matchers(q)
	qr, err := s.db.Querier(mint, maxt)
	if err != nil {
		return 0, 0, err
	}
	defer qr.Close()
	// Sorted, as isotsdb's Select always returns its series.
	ss := qr.Select(context.Background(), true, nil, ms...)
	sum := 0.0
	for ss.Next() {
		series++
		s.it = ss.At().Iterator(s.it)
		for s.it.Next() == chunkenc.ValFloat {
			_, v := s.it.At()
			sum += v
			samples++
		}
		if err := s.it.Err(); err != nil {
			return 0, 0, err
		}
	}
	s.sink += sum
	return series, samples, ss.Err()
}

func (s *promStore) queryHistograms(q *query, mint, maxt int64) (series, samples int, err error) {
	ms := s.matchers(q)
	qr, err := s.db.Querier(mint, maxt)
	if err != nil {
		return 0, 0, err
	}
	defer qr.Close()
	ss := qr.Select(context.Background(), true, nil, ms...)
	var sum uint64
	for ss.Next() {
		series++
		s.it = ss.At().Iterator(s.it)
		var vt chunkenc.ValueType
		for vt = s.it.Next(); vt == chunkenc.ValHistogram; vt = s.it.Next() {
			_, h := s.it.AtHistogram(&s.h)
			sum += h.Count
			samples++
		}
		if err := s.it.Err(); err != nil {
			return 0, 0, err
		}
		if vt != chunkenc.ValNone {
			return 0, 0, fmt.Errorf("bench: %s: a sample of type %v among histograms", ss.At().Labels(), vt)
		}
	}
	s.sink += float64(sum)
	return series, samples, ss.Err()
}

func (s *promStore) scan(q *query, mint, maxt int64, fn func(i int, t int64, v float64)) error {
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
	ss := qr.Select(context.Background(), false, nil, s.matchers(q)...)
	for ss.Next() {
		ls := ss.At().Labels()
		i, ok := s.index[ls.String()]
		if !ok {
			return fmt.Errorf("bench: scan: series %s was never written", ls)
		}
		s.it = ss.At().Iterator(s.it)
		var vt chunkenc.ValueType
		for vt = s.it.Next(); vt == chunkenc.ValFloat; vt = s.it.Next() {
			t, v := s.it.At()
			fn(i, t, v)
		}
		if err := s.it.Err(); err != nil {
			return err
		}
		if vt != chunkenc.ValNone {
			return fmt.Errorf("bench: scan: %s: a sample of type %v among floats", ls, vt)
		}
	}
	return ss.Err()
}

func (s *promStore) startQuery(mint, maxt int64) error {
	q, err := s.db.Querier(mint, maxt)
	if err != nil {
		return err
	}
	return q.Close()
}

func (s *promStore) labelValues(name string, mint, maxt int64) ([]string, error) {
	q, err := s.db.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	vs, _, err := q.LabelValues(context.Background(), name, nil)
	return vs, err
}

func (s *promStore) labelNames(mint, maxt int64) ([]string, error) {
	q, err := s.db.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	ns, _, err := q.LabelNames(context.Background(), nil)
	return ns, err
}

func (s *promStore) compact() error { return s.db.Compact(context.Background()) }

func (s *promStore) blocks() []blockInfo {
	var out []blockInfo
	for _, b := range s.db.Blocks() {
		m := b.Meta()
		out = append(out, blockInfo{dir: filepath.Join(s.db.Dir(), m.ULID.String()), samples: m.Stats.NumSamples})
	}
	return out
}

func (s *promStore) opened() openStats { return s.open }

func (s *promStore) queryable() storage.Queryable { return s.db }

func (s *promStore) close() error { return s.db.Close() }
