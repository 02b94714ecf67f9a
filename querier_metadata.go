package tsdb

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/isotsdb/tsdb/labels"
)

// SeriesMetadata implements Querier.
func (q *querier) SeriesMetadata(lset labels.Labels) (Metadata, bool, error) {
	if !q.rlockOpen() {
		return Metadata{}, false, fmt.Errorf("tsdb: series metadata: %w", ErrClosed)
	}
	defer q.mu.RUnlock()
	lset = lset.WithoutEmpty()
	s := q.head.series.getByHash(lset.Hash(), lset)
	if s == nil {
		return Metadata{}, false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.x == nil {
		return Metadata{}, false, nil
	}
	m, ok := visibleMetadata(q.visible, s.x.meta)
	return m, ok, nil
}

// metadataCtxEvery is how many series Metadata reads between checks of its
// context: often enough to stop within a millisecond or so.
const metadataCtxEvery = 1024

// Metadata implements Querier.
func (q *querier) Metadata(ctx context.Context, metric string) (map[string][]Metadata, error) {
	if !q.rlockOpen() {
		return nil, fmt.Errorf("tsdb: metadata: %w", ErrClosed)
	}
	defer q.mu.RUnlock()
	h := q.head
	out := map[string][]Metadata{}
	n := 0
	var err error
	visit := func(s *memSeries) {
		if err != nil {
			return
		}
		if n++; n%metadataCtxEvery == 0 {
			if err = ctx.Err(); err != nil {
				return
			}
		}
		s.mu.Lock()
		var m Metadata
		ok := false
		if s.x != nil {
			m, ok = visibleMetadata(q.visible, s.x.meta)
		}
		s.mu.Unlock()
		if !ok {
			return
		}
		name := s.lset.Get(labels.MetricName)
		if name == "" || metric != "" && name != metric {
			return
		}
		if !slices.Contains(out[name], m) {
			out[name] = append(out[name], m)
		}
	}
	if metric == "" {
		h.series.refs.each(visit)
	} else {
		p := h.postings.Get(labels.MetricName, metric)
		for p.Next() && err == nil {
			if s := h.series.getByRef(SeriesRef(p.At())); s != nil {
				visit(s)
			}
		}
		if err == nil {
			err = p.Err()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tsdb: metadata: %w", err)
	}
	for _, ms := range out {
		slices.SortFunc(ms, compareMetadata)
	}
	return out, nil
}

// compareMetadata orders metadata by type, then unit, then help.
func compareMetadata(a, b Metadata) int {
	return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Unit, b.Unit), cmp.Compare(a.Help, b.Help))
}
