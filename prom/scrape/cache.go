package scrape

import (
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/metadata"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// The scrape cache: what a Scraper remembers from one scrape to the next.
//
// Series are keyed by the bytes the parser gives for them (the series text
// of a text exposition, a synthesized form for protobuf), so a series seen
// before costs one map lookup instead of label parsing, the target-label
// merge and the database's label lookup: its entry holds the labels and
// the ref the database returned (Appender's ref contract: the ref wins, an
// unknown ref falls back to the labels, so a stale ref is harmless).
//
// Staleness is tracked by ref, as in Prometheus: tracked holds the series
// of the last successful scrape, attempt those appended so far in the
// scrape being made; a series of tracked missing from attempt gets a stale
// marker. Several texts for one series (labels in another order) share the
// ref and so are one series for staleness.

// cacheEntry is one series of the cache.
type cacheEntry struct {
	ref  tsdb.SeriesRef
	lset labels.Labels
	// lastIter is the last scrape (Scraper.iter) that had the series; a
	// second sample of it in one scrape is a duplicate.
	lastIter uint64
	// addedIter is the scrape that created the entry, so that a scrape that
	// commits nothing can forget the entries it made (their metadata and
	// scrape_series_added must come again).
	addedIter uint64
}

// metaEntry is the metadata of one metric family, as the exposition's
// TYPE, HELP and UNIT lines (or protobuf fields) last gave it.
type metaEntry struct {
	metadata.Metadata
	family     string // the family's name
	lastIter   uint64 // last scrape that gave any of it
	changeIter uint64 // last scrape that changed it (or created the entry)
}

// metaCache holds metaEntry values by family name.
type metaCache map[string]*metaEntry

// entry returns the family's entry, creating it in scrape iter, and marks
// it seen in iter.
func (c metaCache) entry(family []byte, iter uint64) *metaEntry {
	e, ok := c[string(family)]
	if !ok {
		e = &metaEntry{family: string(family), changeIter: iter}
		c[e.family] = e
	}
	e.lastIter = iter
	return e
}

func (c metaCache) setType(family []byte, t model.MetricType, iter uint64) *metaEntry {
	e := c.entry(family, iter)
	if e.Type != t {
		e.Type, e.changeIter = t, iter
	}
	return e
}

func (c metaCache) setHelp(family, help []byte, iter uint64) *metaEntry {
	e := c.entry(family, iter)
	if e.Help != string(help) {
		e.Help, e.changeIter = string(help), iter
	}
	return e
}

func (c metaCache) setUnit(family, unit []byte, iter uint64) *metaEntry {
	e := c.entry(family, iter)
	if e.Unit != string(unit) {
		e.Unit, e.changeIter = string(unit), iter
	}
	return e
}

// familySuffixes are the suffixes a series name may add to its family's
// name, by family type. A counter's and an info's family name may carry the
// suffix itself too (the text format names a counter family foo_total).
var familySuffixes = map[model.MetricType][]string{
	model.MetricTypeCounter:        {"_total"},
	model.MetricTypeInfo:           {"_info"},
	model.MetricTypeHistogram:      {"_bucket", "_sum", "_count"},
	model.MetricTypeGaugeHistogram: {"_bucket", "_gsum", "_gcount"},
	model.MetricTypeSummary:        {"_sum", "_count"},
}

// inFamily reports whether the series called name belongs to the family
// called family of type typ: the metadata last parsed applies to a series
// only then (a text exposition need not give TYPE or HELP for every
// family, and then the previous family's must not be taken).
func inFamily(name, family string, typ model.MetricType) bool {
	if name == family {
		return true
	}
	suffixes := familySuffixes[typ]
	if typ == model.MetricTypeCounter || typ == model.MetricTypeInfo {
		return strings.TrimSuffix(name, suffixes[0]) == strings.TrimSuffix(family, suffixes[0])
	}
	for _, s := range suffixes {
		if len(name) == len(family)+len(s) && strings.HasPrefix(name, family) && strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
