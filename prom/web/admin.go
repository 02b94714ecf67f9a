package promweb

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	plabels "github.com/prometheus/prometheus/model/labels"
	ptsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/index"
	v1 "github.com/prometheus/prometheus/web/api/v1"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// adminStats is v1.TSDBAdminStats over an isotsdb DB: what
// /api/v1/status/tsdb, status/tsdb/blocks, status/walreplay and the admin
// endpoints call.
type adminStats struct {
	db *tsdb.DB
}

var _ v1.TSDBAdminStats = adminStats{}

// CleanTombstones implements v1.TSDBAdminStats (DB.CleanTombstones).
func (a adminStats) CleanTombstones() error {
	if err := a.db.CleanTombstones(context.Background()); err != nil {
		return fmt.Errorf("promweb: clean tombstones: %w", err)
	}
	return nil
}

// Delete implements v1.TSDBAdminStats (DB.Delete). The matchers keep
// Prometheus's meaning: isotsdb's regexps are anchored as Prometheus's are.
func (a adminStats) Delete(ctx context.Context, mint, maxt int64, ms ...*plabels.Matcher) error {
	our := make([]*labels.Matcher, len(ms))
	for i, m := range ms {
		om, err := labels.NewMatcher(labels.MatchType(m.Type), m.Name, m.Value)
		if err != nil {
			return fmt.Errorf("promweb: delete: %w", err)
		}
		our[i] = om
	}
	if err := a.db.Delete(ctx, mint, maxt, our...); err != nil {
		return fmt.Errorf("promweb: delete: %w", err)
	}
	return nil
}

// Snapshot implements v1.TSDBAdminStats (DB.Snapshot).
func (a adminStats) Snapshot(dir string, withHead bool) error {
	if err := a.db.Snapshot(dir, withHead); err != nil {
		return fmt.Errorf("promweb: snapshot: %w", err)
	}
	return nil
}

// WALReplayStatus implements v1.TSDBAdminStats: an open isotsdb DB has
// replayed its WAL, so the replay is always complete (0 of 0).
func (a adminStats) WALReplayStatus() (ptsdb.WALReplayStatus, error) {
	return ptsdb.WALReplayStatus{}, nil
}

// BlockMetas implements v1.TSDBAdminStats. isotsdb's BlockMeta is
// Prometheus's meta.json plus a key of its own, so the conversion goes
// through that JSON (which drops the extra key).
func (a adminStats) BlockMetas() ([]ptsdb.BlockMeta, error) {
	b, err := json.Marshal(a.db.Blocks())
	if err != nil {
		return nil, fmt.Errorf("promweb: block metas: %w", err)
	}
	var out []ptsdb.BlockMeta
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("promweb: block metas: %w", err)
	}
	if out == nil {
		out = []ptsdb.BlockMeta{}
	}
	return out, nil
}

// Stats implements v1.TSDBAdminStats with the figures Prometheus's head
// reports (Head.Stats): the head's series count and time range, and over
// the head's series the number of label pairs and the limit highest of
// series per value of statsByLabelName, values per label name, bytes per
// label name (plabels.SizeOfLabels per pair times its series, as
// Prometheus counts them) and series per label pair. Entries with equal
// counts are in name order (Prometheus leaves their order unspecified).
//
// The series are those DB.HeadSeries lists (one snapshot), so the counts
// agree with each other; NumSeries, MinTime and MaxTime come from
// DB.Head, read just before.
func (a adminStats) Stats(statsByLabelName string, limit int) (*ptsdb.Stats, error) {
	h := a.db.Head()
	st := &ptsdb.Stats{
		NumSeries: uint64(max(h.NumSeries(), 0)),
		MinTime:   h.MinTime(),
		MaxTime:   h.MaxTime(),
	}
	// series[name][value] counts the series with that label pair.
	series := map[string]map[string]uint64{}
	err := a.db.HeadSeries(context.Background(), func(s tsdb.HeadSeriesInfo) bool {
		s.Labels.Range(func(l labels.Label) {
			vs := series[l.Name]
			if vs == nil {
				vs = map[string]uint64{}
				series[l.Name] = vs
			}
			vs[l.Value]++
		})
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("promweb: tsdb stats: %w", err)
	}
	var metrics, names, bytes, pairs []index.Stat
	ps := &index.PostingsStats{}
	for name, vs := range series {
		names = append(names, index.Stat{Name: name, Count: uint64(len(vs))})
		ps.NumLabelPairs += len(vs)
		var size uint64
		for v, n := range vs {
			if name == statsByLabelName {
				metrics = append(metrics, index.Stat{Name: v, Count: n})
			}
			pairs = append(pairs, index.Stat{Name: name + "=" + v, Count: n})
			size += plabels.SizeOfLabels(name, v, n)
		}
		bytes = append(bytes, index.Stat{Name: name, Count: size})
	}
	ps.CardinalityMetricsStats = topStats(metrics, limit)
	ps.CardinalityLabelStats = topStats(names, limit)
	ps.LabelValueStats = topStats(bytes, limit)
	ps.LabelValuePairsStats = topStats(pairs, limit)
	st.IndexPostingStats = ps
	return st, nil
}

// topStats returns the limit entries of s with the highest counts, ties
// in name order.
func topStats(s []index.Stat, limit int) []index.Stat {
	slices.SortFunc(s, func(a, b index.Stat) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
	return s[:min(max(limit, 0), len(s))]
}
