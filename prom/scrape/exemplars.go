package scrape

import (
	"errors"
	"slices"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// appendExemplars appends the exemplars of the sample p is at, of the
// series ce at time t. As in Prometheus, an exemplar without a timestamp
// takes t, except on a native histogram (hist), where it is dropped; they
// are appended in time order; and rejections are counted, never fatal.
func (s *Scraper) appendExemplars(app tsdb.Appender, p textparse.Parser, ce *cacheEntry, t int64, hist bool, res *Result) {
	s.exs = s.exs[:0]
	for p.Exemplar(&s.ex) {
		e := s.ex
		s.ex = exemplar.Exemplar{}
		if !e.HasTs {
			if hist {
				continue
			}
			e.Ts = t
		}
		s.exs = append(s.exs, e)
	}
	if len(s.exs) == 0 {
		return
	}
	slices.SortFunc(s.exs, exemplar.Compare)
	outOfOrder := 0
	for _, e := range s.exs {
		ours := tsdb.Exemplar{Labels: promstorage.FromPromLabels(&s.sb, e.Labels), Value: e.Value, Ts: e.Ts, HasTs: e.HasTs}
		_, err := app.AppendExemplar(ce.ref, ce.lset, ours)
		switch {
		case err == nil:
			res.Exemplars++
		case errors.Is(err, tsdb.ErrOutOfOrderExemplar):
			outOfOrder++
		default:
			res.ExemplarsRejected++
		}
	}
	if outOfOrder == len(s.exs) {
		res.ExemplarsOutOfOrder += outOfOrder
	} else {
		res.ExemplarsRejected += outOfOrder
	}
}
