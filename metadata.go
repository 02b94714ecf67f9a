package tsdb

import (
	"fmt"
	"unicode/utf8"

	"github.com/isotsdb/tsdb/internal/record"
)

// Series metadata.
//
// A series may carry the metadata of its metric: its type, unit and help
// text, as a Prometheus scrape reports them (# TYPE, # UNIT, # HELP). An
// Appender sets it with UpdateMetadata, in its transaction: Commit applies
// it under the commit's write ID together with the samples, and logs it
// in the commit's WAL records (head_metadata.go), so a read or a replay
// sees a commit's metadata whole or not at all, as it sees its samples.
// Only the head holds metadata, as in Prometheus: blocks do not store it,
// and a series that leaves the head (no samples left after a truncation)
// takes its metadata with it. Queriers read it (Querier.SeriesMetadata,
// Querier.Metadata) as of their snapshot.

// MetricType is the type of a metric. The values are the bytes
// Prometheus's WAL stores for its metric types; never renumber them.
type MetricType uint8

// The metric types, named as in Prometheus (model.MetricType).
const (
	MetricTypeUnknown        = MetricType(record.MetricTypeUnknown)
	MetricTypeCounter        = MetricType(record.MetricTypeCounter)
	MetricTypeGauge          = MetricType(record.MetricTypeGauge)
	MetricTypeHistogram      = MetricType(record.MetricTypeHistogram)
	MetricTypeGaugeHistogram = MetricType(record.MetricTypeGaugeHistogram)
	MetricTypeSummary        = MetricType(record.MetricTypeSummary)
	MetricTypeInfo           = MetricType(record.MetricTypeInfo)
	MetricTypeStateset       = MetricType(record.MetricTypeStateset)
)

// metricTypeNames are the names of the metric types, indexed by value:
// Prometheus's model.MetricType strings.
var metricTypeNames = [...]string{
	MetricTypeUnknown:        "unknown",
	MetricTypeCounter:        "counter",
	MetricTypeGauge:          "gauge",
	MetricTypeHistogram:      "histogram",
	MetricTypeGaugeHistogram: "gaugehistogram",
	MetricTypeSummary:        "summary",
	MetricTypeInfo:           "info",
	MetricTypeStateset:       "stateset",
}

// String returns the type's name as Prometheus spells it ("counter",
// "gaugehistogram", ...); "unknown" for MetricTypeUnknown and for values
// that are no type.
func (t MetricType) String() string {
	if int(t) < len(metricTypeNames) {
		return metricTypeNames[t]
	}
	return metricTypeNames[MetricTypeUnknown]
}

// Valid reports whether t is one of the MetricType constants.
func (t MetricType) Valid() bool { return int(t) < len(metricTypeNames) }

// ParseMetricType returns the type named s (as String spells it). The
// empty string is MetricTypeUnknown, as in Prometheus. ok is false for any
// other name, and the type is then MetricTypeUnknown.
func ParseMetricType(s string) (t MetricType, ok bool) {
	if s == "" {
		return MetricTypeUnknown, true
	}
	for i, name := range metricTypeNames {
		if name == s {
			return MetricType(i), true
		}
	}
	return MetricTypeUnknown, false
}

// metricTypeFromWAL maps a type byte of a Metadata record to a
// MetricType: bytes of types this version does not know (a newer writer's)
// are MetricTypeUnknown.
func metricTypeFromWAL(b uint8) MetricType {
	if t := MetricType(b); t.Valid() {
		return t
	}
	return MetricTypeUnknown
}

// Metadata is what a series' metric says of itself. The zero value is
// "nothing known". Metadata values are comparable: two are the same
// metadata iff they are ==.
type Metadata struct {
	Type MetricType
	Unit string
	Help string
}

// IsEmpty reports whether m says nothing: unknown type, no unit, no help.
func (m Metadata) IsEmpty() bool { return m == Metadata{} }

// validate checks m for UpdateMetadata: a known type, and a unit and help
// in UTF-8 (they end up in JSON and in Prometheus's API).
func (m Metadata) validate() error {
	switch {
	case !m.Type.Valid():
		return fmt.Errorf("%w: metric type %d", ErrInvalidMetadata, m.Type)
	case !utf8.ValidString(m.Unit):
		return fmt.Errorf("%w: unit %q is not valid UTF-8", ErrInvalidMetadata, m.Unit)
	case !utf8.ValidString(m.Help):
		return fmt.Errorf("%w: help %q is not valid UTF-8", ErrInvalidMetadata, m.Help)
	}
	return nil
}
