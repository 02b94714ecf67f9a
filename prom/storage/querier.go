package promstorage

import (
	"context"

	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/isotsdb/tsdb"
)

// querier is a Prometheus Querier over one isotsdb Querier, and so over one
// read snapshot. It is safe for concurrent use, as the isotsdb Querier is;
// the series sets it returns are not (each is used by one goroutine).
type querier struct {
	q          tsdb.Querier
	mint, maxt int64 // the range q was opened for, inclusive
}

var _ storage.Querier = (*querier)(nil)

// Select implements storage.Querier. sortSeries is free: isotsdb always
// returns series sorted by labels, in the same order as Prometheus's
// labels.Compare.
func (q *querier) Select(ctx context.Context, _ bool, hints *storage.SelectHints, ms ...*plabels.Matcher) storage.SeriesSet {
	oms, err := toOurMatchers(ms)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	ss := &seriesSet{mint: q.mint, maxt: q.maxt}
	if hints != nil {
		// The isotsdb Querier's range is fixed when it is opened (so that one
		// snapshot serves the whole Prometheus Querier); a selector's own
		// range is applied here, by clipping its iterators.
		ss.mint, ss.maxt = max(ss.mint, hints.Start), min(ss.maxt, hints.End)
		ss.narrowed = ss.mint > q.mint || ss.maxt < q.maxt
		ss.limit = hints.Limit
		ss.shardCount, ss.shardIndex = hints.ShardCount, hints.ShardIndex
		ss.noSamples = hints.Func == "series"
	}
	if ss.mint > ss.maxt {
		return storage.EmptySeriesSet()
	}
	ss.set = q.q.Select(ctx, oms...)
	return ss
}

// LabelValues implements storage.LabelQuerier.
func (q *querier) LabelValues(ctx context.Context, name string, hints *storage.LabelHints, ms ...*plabels.Matcher) ([]string, annotations.Annotations, error) {
	oms, err := toOurMatchers(ms)
	if err != nil {
		return nil, nil, err
	}
	vals, err := q.q.LabelValues(ctx, name, oms...)
	if err != nil {
		return nil, nil, err
	}
	vals, _ = hints.ApplyLimit(vals)
	return vals, nil, nil
}

// LabelNames implements storage.LabelQuerier.
func (q *querier) LabelNames(ctx context.Context, hints *storage.LabelHints, ms ...*plabels.Matcher) ([]string, annotations.Annotations, error) {
	oms, err := toOurMatchers(ms)
	if err != nil {
		return nil, nil, err
	}
	names, err := q.q.LabelNames(ctx, oms...)
	if err != nil {
		return nil, nil, err
	}
	names, _ = hints.ApplyLimit(names)
	return names, nil, nil
}

// Close implements storage.LabelQuerier: it releases the read snapshot.
// Series already returned stay iterable.
func (q *querier) Close() error { return q.q.Close() }

// chunkQuerier is a Prometheus ChunkQuerier that encodes the samples of a
// querier's series into chunks on the fly.
type chunkQuerier struct{ *querier }

var _ storage.ChunkQuerier = chunkQuerier{}

// Select implements storage.ChunkQuerier.
func (q chunkQuerier) Select(ctx context.Context, sortSeries bool, hints *storage.SelectHints, ms ...*plabels.Matcher) storage.ChunkSeriesSet {
	return storage.NewSeriesSetToChunkSet(q.querier.Select(ctx, sortSeries, hints, ms...))
}

// seriesSet adapts an isotsdb SeriesSet, applying the select hints that
// isotsdb does not take. Used by one goroutine at a time.
type seriesSet struct {
	set        tsdb.SeriesSet
	mint, maxt int64 // samples outside are dropped
	narrowed   bool  // [mint, maxt] is narrower than the isotsdb Querier's range

	limit      int // stop after this many series; 0: no limit
	shardCount uint64
	shardIndex uint64
	noSamples  bool // hints.Func == "series": labels only

	returned int
	cur      *series
	lb       plabels.ScratchBuilder
	peek     iterator // to test series for samples in a narrowed range
}

// Next implements storage.SeriesSet.
func (s *seriesSet) Next() bool {
	if s.limit > 0 && s.returned >= s.limit {
		return false
	}
	for s.set.Next() {
		ts := s.set.At()
		if s.narrowed && !s.hasSamples(ts) {
			// isotsdb returned it for samples outside this selector's
			// range; Prometheus returns only series with samples in it.
			continue
		}
		ls := toPromLabels(&s.lb, ts.Labels())
		if s.shardCount > 0 && plabels.StableHash(ls)%s.shardCount != s.shardIndex {
			continue
		}
		s.cur = &series{labels: ls, s: ts, mint: s.mint, maxt: s.maxt, noSamples: s.noSamples}
		s.returned++
		return true
	}
	return false
}

// hasSamples reports whether ts has a sample (of any type) in [s.mint,
// s.maxt]. An iteration error counts as samples: Iterator will report it.
func (s *seriesSet) hasSamples(ts tsdb.Series) bool {
	s.peek.reset(ts.Iterator(s.peek.it), s.mint, s.maxt)
	return s.peek.Next() != chunkenc.ValNone || s.peek.Err() != nil
}

// At implements storage.SeriesSet. The series stays usable after Next.
func (s *seriesSet) At() storage.Series { return s.cur }

// Err implements storage.SeriesSet.
func (s *seriesSet) Err() error { return s.set.Err() }

// Warnings implements storage.SeriesSet: isotsdb has none to give.
func (s *seriesSet) Warnings() annotations.Annotations { return nil }

// series is one series of a seriesSet.
type series struct {
	labels     plabels.Labels
	s          tsdb.Series
	mint, maxt int64
	noSamples  bool
}

// Labels implements storage.Series.
func (s *series) Labels() plabels.Labels { return s.labels }

// Iterator implements storage.Series. reuse may be any iterator; one made
// by this package is recycled.
func (s *series) Iterator(reuse chunkenc.Iterator) chunkenc.Iterator {
	if s.noSamples {
		return chunkenc.NewNopIterator()
	}
	it, ok := reuse.(*iterator)
	if !ok {
		it = &iterator{}
	}
	it.reset(s.s.Iterator(it.it), s.mint, s.maxt)
	return it
}
