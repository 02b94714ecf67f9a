// Package histogram is the data model of native histograms: the sparse,
// high-resolution histograms Prometheus stores next to float samples.
//
// # Buckets and schemas
//
// A histogram counts observations in buckets. Which real interval a bucket
// covers follows from its integer index and the histogram's Schema:
//
//   - Exponential schemas, ExponentialSchemaMin (−4) to ExponentialSchemaMax
//     (8). Bucket boundaries are powers of 2^(2^−schema); 1 is always a
//     boundary. Positive bucket i covers (b(i−1), b(i)] with b(i) =
//     2^(i·2^−schema); negative bucket i covers [−b(i), −b(i−1)). At schema 0
//     each bucket is twice as wide as the one below it; every step up in
//     schema splits each bucket in two. A zero bucket [−ZeroThreshold,
//     ZeroThreshold] holds ZeroCount observations too close to zero for the
//     regular buckets.
//   - The custom-bucket schema, CustomBucketsSchema (−53), also called NHCB
//     (native histogram with custom buckets), the form classic histograms
//     take. CustomValues holds the finite, strictly increasing upper bounds;
//     bucket i covers (CustomValues[i−1], CustomValues[i]], bucket 0 starts at
//     −Inf and bucket len(CustomValues) ends at +Inf. Such histograms have only
//     positive buckets and no zero bucket.
//
// # Spans and bucket encoding
//
// Only populated ranges of buckets are stored. Spans say which: the first
// Span's Offset is the index of its first bucket (it may be negative), every
// later Offset is the number of unstored buckets between the previous span and
// this one (never negative), and Length is the number of consecutive buckets
// in the span. The bucket slices hold one entry per bucket the spans cover, in
// index order, so the sum of the span lengths equals the length of the
// matching bucket slice.
//
// Histogram is the integer form, the one instrumented code exposes: its bucket
// slices are delta-encoded (the first entry is a count, each later entry the
// difference to the previous bucket's count), which makes them cheap to
// compress. FloatHistogram is the float form PromQL computes with: absolute,
// possibly fractional counts.
//
// Count is the number of observations, Sum their sum. An observation of NaN
// increments Count but no bucket, so when Sum is NaN Count may exceed the
// bucket total; otherwise (integer form) the two must be equal.
//
// # Counter-reset hints
//
// CounterResetHint tells a reader what is known about a counter reset at this
// sample: nothing (UnknownCounterReset), that one happened (CounterReset), that
// none happened (NotCounterReset), or that the series is a gauge histogram to
// which resets do not apply (GaugeType).
//
// # Validation
//
// Validate checks a histogram exactly as Prometheus v0.316.0 does, so that a
// histogram one accepts the other accepts too. Every error it returns wraps
// ErrInvalid and one of the more precise sentinels declared in errors.go, with
// the offending span, bucket or value in its text. Checks use the same
// fixed-width arithmetic as Prometheus: bucket counts and their total are
// computed modulo 2^64, as Prometheus computes them.
//
// # Ownership
//
// Values of these types are plain data with no internal synchronisation: share
// them between goroutines only read-only. Copy returns a copy that shares no
// memory with the original.
package histogram
