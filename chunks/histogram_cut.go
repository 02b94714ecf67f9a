package chunks

import "math"

// Size-based cutting of histogram chunks. A histogram sample can take
// hundreds of bytes, so a head cannot cut histogram chunks every 120
// samples as it does XOR chunks. It follows Prometheus's head instead:
// aim for chunks of about TargetBytesPerHistogramChunk, predict once when
// a chunk will reach that size, never cut a chunk of fewer than
// MinSamplesPerHistogramChunk samples unless the chunk range ends, and cut
// at once if a chunk passes twice the target. Cutting because the encoding
// changes (a float sample after histograms or the reverse, or an integer
// histogram after float ones) is not size-based: the head always cuts then.
const (
	// TargetBytesPerHistogramChunk is the size a histogram chunk aims for:
	// 1 KiB, the size of a full XOR chunk.
	TargetBytesPerHistogramChunk = 1024
	// MinSamplesPerHistogramChunk is the fewest samples a histogram chunk
	// is cut at within a chunk range, so that a few huge histograms do not
	// make chunks of one or two samples each.
	MinSamplesPerHistogramChunk = 10
)

// HistogramChunkEndTime predicts when a histogram chunk started at start
// should end. A head calls it once per chunk, for the first sample at
// which the chunk (of numBytes bytes, last sample at cur) has reached a
// quarter of TargetBytesPerHistogramChunk; before that it uses rangeEnd,
// the end of the chunk range, as the chunk's end. Assuming samples keep
// coming at the same rate and size, the result splits what is left of the
// range into chunks of about the target size; it is never after rangeEnd.
// ok is false while numBytes is below the quarter: no prediction yet.
func HistogramChunkEndTime(start, cur, rangeEnd int64, numBytes int) (end int64, ok bool) {
	if numBytes < TargetBytesPerHistogramChunk/4 {
		return rangeEnd, false
	}
	ratioToFull := float64(TargetBytesPerHistogramChunk) / float64(numBytes)
	n := float64(rangeEnd-start) / (float64(cur-start+1) * ratioToFull)
	if n <= 1 {
		return rangeEnd, true
	}
	return int64(float64(start) + float64(rangeEnd-start)/math.Floor(n)), true
}

// ShouldCutHistogramChunk reports whether a sample at time t must start a
// new histogram chunk instead of joining the current one, which holds
// numSamples samples in numBytes bytes. nextAt is the chunk's end time (as
// predicted by HistogramChunkEndTime, or the end of its chunk range), and
// rangeEnd the end of the chunk range the chunk started in; when no
// prediction has been made yet, pass nextAt for rangeEnd too, which lets a
// head whose end time came from elsewhere (a snapshot) cut at it even
// below the minimum sample count. The rule is Prometheus's: the chunk's
// time is up or it has passed twice the target size, and it has at least
// MinSamplesPerHistogramChunk samples or the range has ended.
func ShouldCutHistogramChunk(numSamples, numBytes int, t, nextAt, rangeEnd int64) bool {
	return (t >= nextAt || numBytes >= 2*TargetBytesPerHistogramChunk) &&
		(numSamples >= MinSamplesPerHistogramChunk || t >= rangeEnd)
}
