package promstorage

import (
	"slices"

	phistogram "github.com/prometheus/prometheus/model/histogram"

	"github.com/isotsdb/tsdb/histogram"
)

// The conversions below copy every field, the unused ones included, into
// slices that share no memory with the source (Prometheus's interned
// CustomValues are copied too). nil slices stay nil and empty ones empty, so
// a converted histogram validates as the original does and converting back
// gives the original. A nil histogram converts to nil.

// FromPromHistogram converts a Prometheus integer histogram to isotsdb's.
func FromPromHistogram(h *phistogram.Histogram) *histogram.Histogram {
	if h == nil {
		return nil
	}
	return &histogram.Histogram{
		CounterResetHint: histogram.CounterResetHint(h.CounterResetHint),
		Schema:           h.Schema,
		ZeroThreshold:    h.ZeroThreshold,
		ZeroCount:        h.ZeroCount,
		Count:            h.Count,
		Sum:              h.Sum,
		PositiveSpans:    fromPromSpans(h.PositiveSpans),
		NegativeSpans:    fromPromSpans(h.NegativeSpans),
		PositiveBuckets:  slices.Clone(h.PositiveBuckets),
		NegativeBuckets:  slices.Clone(h.NegativeBuckets),
		CustomValues:     slices.Clone(h.CustomValues),
	}
}

// ToPromHistogram converts an isotsdb integer histogram to Prometheus's.
func ToPromHistogram(h *histogram.Histogram) *phistogram.Histogram {
	if h == nil {
		return nil
	}
	return &phistogram.Histogram{
		CounterResetHint: phistogram.CounterResetHint(h.CounterResetHint),
		Schema:           h.Schema,
		ZeroThreshold:    h.ZeroThreshold,
		ZeroCount:        h.ZeroCount,
		Count:            h.Count,
		Sum:              h.Sum,
		PositiveSpans:    toPromSpans(h.PositiveSpans),
		NegativeSpans:    toPromSpans(h.NegativeSpans),
		PositiveBuckets:  slices.Clone(h.PositiveBuckets),
		NegativeBuckets:  slices.Clone(h.NegativeBuckets),
		CustomValues:     slices.Clone(h.CustomValues),
	}
}

// FromPromFloatHistogram converts a Prometheus float histogram to isotsdb's.
func FromPromFloatHistogram(h *phistogram.FloatHistogram) *histogram.FloatHistogram {
	if h == nil {
		return nil
	}
	return &histogram.FloatHistogram{
		CounterResetHint: histogram.CounterResetHint(h.CounterResetHint),
		Schema:           h.Schema,
		ZeroThreshold:    h.ZeroThreshold,
		ZeroCount:        h.ZeroCount,
		Count:            h.Count,
		Sum:              h.Sum,
		PositiveSpans:    fromPromSpans(h.PositiveSpans),
		NegativeSpans:    fromPromSpans(h.NegativeSpans),
		PositiveBuckets:  slices.Clone(h.PositiveBuckets),
		NegativeBuckets:  slices.Clone(h.NegativeBuckets),
		CustomValues:     slices.Clone(h.CustomValues),
	}
}

// ToPromFloatHistogram converts an isotsdb float histogram to Prometheus's.
func ToPromFloatHistogram(h *histogram.FloatHistogram) *phistogram.FloatHistogram {
	if h == nil {
		return nil
	}
	return &phistogram.FloatHistogram{
		CounterResetHint: phistogram.CounterResetHint(h.CounterResetHint),
		Schema:           h.Schema,
		ZeroThreshold:    h.ZeroThreshold,
		ZeroCount:        h.ZeroCount,
		Count:            h.Count,
		Sum:              h.Sum,
		PositiveSpans:    toPromSpans(h.PositiveSpans),
		NegativeSpans:    toPromSpans(h.NegativeSpans),
		PositiveBuckets:  slices.Clone(h.PositiveBuckets),
		NegativeBuckets:  slices.Clone(h.NegativeBuckets),
		CustomValues:     slices.Clone(h.CustomValues),
	}
}

func fromPromSpans(spans []phistogram.Span) []histogram.Span {
	if spans == nil {
		return nil
	}
	out := make([]histogram.Span, len(spans))
	for i, s := range spans {
		out[i] = histogram.Span{Offset: s.Offset, Length: s.Length}
	}
	return out
}

func toPromSpans(spans []histogram.Span) []phistogram.Span {
	if spans == nil {
		return nil
	}
	out := make([]phistogram.Span, len(spans))
	for i, s := range spans {
		out[i] = phistogram.Span{Offset: s.Offset, Length: s.Length}
	}
	return out
}
