package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/isotsdb/tsdb/labels"
)

// stat is one entry of a cardinality list.
type stat struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// headStatsJSON is the headStats object of /status/tsdb.
type headStatsJSON struct {
	NumSeries     uint64 `json:"numSeries"`
	NumLabelPairs int    `json:"numLabelPairs"`
	// ChunkCount is left out when the database does not know it.
	ChunkCount *int64 `json:"chunkCount,omitempty"`
	MinTime    int64  `json:"minTime"`
	MaxTime    int64  `json:"maxTime"`
}

// tsdbStatus is the data of /status/tsdb, as Prometheus names it: the
// head's stats and its top cardinalities.
type tsdbStatus struct {
	HeadStats                   headStatsJSON `json:"headStats"`
	SeriesCountByMetricName     []stat        `json:"seriesCountByMetricName"`
	LabelValueCountByLabelName  []stat        `json:"labelValueCountByLabelName"`
	MemoryInBytesByLabelName    []stat        `json:"memoryInBytesByLabelName"`
	SeriesCountByLabelValuePair []stat        `json:"seriesCountByLabelValuePair"`
}

// tsdbStatus reports the head's stats and, for its series, the limit
// (default 10) highest of: series per metric name, values per label
// name, bytes of the values per label name, series per label pair.
func (h *handler) tsdbStatus(r *http.Request) (any, *apiError) {
	limit := defaultStatusLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, badData("limit", errors.New("limit must be a positive number"))
		}
		limit = n
	}
	hs := h.db.HeadStats()
	pairs := map[labels.Label]uint64{}
	err := h.db.HeadSeries(r.Context(), func(ls labels.Labels) error {
		ls.Range(func(l labels.Label) { pairs[l]++ })
		return nil
	})
	if err != nil {
		return nil, internal(fmt.Errorf("read head series: %w", err))
	}
	var (
		metrics  []stat
		byPair   = make([]stat, 0, len(pairs))
		values   = map[string]uint64{}
		valueLen = map[string]uint64{}
	)
	for l, n := range pairs {
		byPair = append(byPair, stat{l.Name + "=" + l.Value, n})
		values[l.Name]++
		valueLen[l.Name] += uint64(len(l.Value))
		if l.Name == labels.MetricName {
			metrics = append(metrics, stat{l.Value, n})
		}
	}
	st := tsdbStatus{
		HeadStats: headStatsJSON{NumSeries: hs.NumSeries, NumLabelPairs: len(pairs),
			MinTime: hs.MinTime, MaxTime: hs.MaxTime},
		SeriesCountByMetricName:     top(metrics, limit),
		LabelValueCountByLabelName:  top(mapStats(values), limit),
		MemoryInBytesByLabelName:    top(mapStats(valueLen), limit),
		SeriesCountByLabelValuePair: top(byPair, limit),
	}
	if hs.ChunkCount >= 0 {
		st.HeadStats.ChunkCount = &hs.ChunkCount
	}
	return st, nil
}

func mapStats(m map[string]uint64) []stat {
	out := make([]stat, 0, len(m))
	for name, n := range m {
		out = append(out, stat{name, n})
	}
	return out
}

// top returns the limit entries of s with the highest values (ties in
// name order), never nil.
func top(s []stat, limit int) []stat {
	slices.SortFunc(s, func(a, b stat) int {
		return cmp.Or(cmp.Compare(b.Value, a.Value), strings.Compare(a.Name, b.Name))
	})
	out := make([]stat, 0, min(limit, len(s)))
	return append(out, s[:min(limit, len(s))]...)
}
