package tsdb

// Block ranges. Blocks cut from the head span MinBlockDuration (2h by
// default), aligned to multiples of it since the Unix epoch; compaction
// merges adjacent blocks into ranges three times larger (2h, 6h, 18h, ...)
// up to MaxBlockDuration. The head cuts its chunks at the same boundaries
// so that moving a range from the head into a block never splits a chunk.

// rangeEnd returns the end (exclusive) of the aligned range of width r that
// holds t.
func rangeEnd(t, r int64) int64 {
	if t >= 0 {
		return (t/r + 1) * r
	}
	return ((t + 1) / r) * r
}
