package tsdb

import (
	"slices"

	"github.com/isotsdb/tsdb/labels"
)

// Label order of head series.
//
// A Select returns series sorted by labels. The head finds its matches by
// ref, so it must sort them, and comparing label sets costs a cache miss
// or two per comparison once the head holds more series than the cache:
// at 200,000 series, sorting everything took a third of a full read. So
// the head keeps a seriesOrder: every series' rank in label order, built
// in the background from all series at once and replaced whole. A Select
// sorts the ranked matches by rank, which it reads by ref from a dense
// array in the postings' (increasing) ref order, and places the unranked
// ones (created since the last build, or with refs beyond the array) among
// them by label comparisons. A ref's labels never change, so a rank stays
// right for as long as its series lives; a deleted series' rank is never
// asked for again (refs are not reused). Reads never wait for a build.
//
// Isolation does not enter: ranks only order series a read has already
// chosen.

// seriesOrder ranks the series that existed when it was built. Immutable.
type seriesOrder struct {
	rank []uint32 // by ref: 1 + position in label order; 0 if not ranked
}

// rankOf returns ref's rank, 0 if it has none.
func (o *seriesOrder) rankOf(ref SeriesRef) uint32 {
	if uint64(ref) < uint64(len(o.rank)) {
		return o.rank[ref]
	}
	return 0
}

// orderStaleShare: a Select asks for a new order when more than 1/16 of
// its matches (and more than orderStaleMin) have no rank.
const (
	orderStaleShare = 16
	orderStaleMin   = 64
)

// buildOrder ranks every series now in the head and publishes the result.
// Series refs beyond 4 per series (sparse refs of a foreign WAL) stay
// unranked, so the array stays proportional to the series. Builds may run
// concurrently (the DB's order loop, and tests calling it directly): each
// publishes a complete order, valid for every series it ranks, and the last
// one stored wins.
func (h *head) buildOrder() {
	var all []*memSeries
	var maxRef SeriesRef
	h.series.refs.each(func(s *memSeries) {
		all = append(all, s)
		maxRef = max(maxRef, s.ref)
	})
	slices.SortFunc(all, func(a, b *memSeries) int { return labels.Compare(a.lset, b.lset) })
	limit := min(maxRef, SeriesRef(4*len(all)+1024))
	o := &seriesOrder{rank: make([]uint32, limit+1)}
	for i, s := range all {
		if s.ref <= limit {
			o.rank[s.ref] = uint32(i + 1)
		}
	}
	h.order.Store(o)
}

// requestOrder asks the order loop for a new seriesOrder, without waiting.
func (h *head) requestOrder() {
	select {
	case h.orderc <- struct{}{}:
	default:
	}
}

// sortSeries sorts series, which are in increasing ref order, by labels.
func (h *head) sortSeries(series []*memSeries) {
	if len(series) < 2 {
		return
	}
	o := h.order.Load()
	if o == nil {
		if len(series) > orderStaleMin {
			h.requestOrder()
		}
		slices.SortFunc(series, compareSeriesLabels)
		return
	}
	keys := make([]uint64, 0, len(series))
	var unranked []*memSeries
	for i, s := range series {
		if r := o.rankOf(s.ref); r != 0 {
			keys = append(keys, uint64(r)<<32|uint64(i))
		} else {
			unranked = append(unranked, s)
		}
	}
	if len(unranked) > orderStaleMin && len(unranked) > len(series)/orderStaleShare {
		h.requestOrder()
	}
	slices.Sort(keys)
	ranked := make([]*memSeries, len(keys))
	for j, k := range keys {
		ranked[j] = series[uint32(k)]
	}
	if len(unranked) == 0 {
		copy(series, ranked)
		return
	}
	// Place the unranked among the ranked: both sorted, each unranked one
	// found by binary search, so that the ranked are not compared with
	// each other.
	slices.SortFunc(unranked, compareSeriesLabels)
	n, lo := 0, 0
	for _, u := range unranked {
		i, _ := slices.BinarySearchFunc(ranked[lo:], u, compareSeriesLabels)
		n += copy(series[n:], ranked[lo:lo+i])
		series[n] = u
		n++
		lo += i
	}
	copy(series[n:], ranked[lo:])
}

func compareSeriesLabels(a, b *memSeries) int { return labels.Compare(a.lset, b.lset) }
