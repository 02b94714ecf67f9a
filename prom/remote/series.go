package remote

import (
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	"github.com/prometheus/prometheus/prompb"

	isolabels "github.com/isotsdb/tsdb/labels"
)

// series is a series as it is sent: its labels after external labels and
// relabeling, ready for a prompb.TimeSeries. Entries are immutable once
// made, so shards read them without locks.
type series struct {
	labels []prompb.Label
}

// seriesMap maps the WAL's series references to what is sent for them; a
// nil entry marks a series dropped by relabeling. It is owned by the
// reader goroutine and not safe for concurrent use.
type seriesMap struct {
	refs     map[uint64]*series
	external labels.Labels
	relabel  []*relabel.Config
	lb       *labels.Builder
}

func newSeriesMap(external labels.Labels, cfgs []*relabel.Config) *seriesMap {
	return &seriesMap{
		refs:     make(map[uint64]*series),
		external: external,
		relabel:  cfgs,
		lb:       labels.NewBuilder(labels.EmptyLabels()),
	}
}

// set defines (or redefines) series ref with the labels ls from the WAL.
func (m *seriesMap) set(ref uint64, ls isolabels.Labels) {
	m.lb.Reset(labels.EmptyLabels())
	ls.Range(func(l isolabels.Label) { m.lb.Set(l.Name, l.Value) })
	m.external.Range(func(l labels.Label) {
		if m.lb.Get(l.Name) == "" {
			m.lb.Set(l.Name, l.Value)
		}
	})
	if len(m.relabel) > 0 && !relabel.ProcessBuilder(m.lb, m.relabel...) {
		m.refs[ref] = nil
		return
	}
	out := m.lb.Labels()
	if out.IsEmpty() {
		m.refs[ref] = nil
		return
	}
	pl := make([]prompb.Label, 0, out.Len())
	out.Range(func(l labels.Label) { pl = append(pl, prompb.Label{Name: l.Name, Value: l.Value}) })
	m.refs[ref] = &series{labels: pl}
}

// get returns the series to send for ref, or nil if it is unknown or
// dropped.
func (m *seriesMap) get(ref uint64) *series { return m.refs[ref] }
