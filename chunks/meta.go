package chunks

// Meta is a chunk together with its time range, as a block's index records
// it. Ref locates the chunk in the block's chunk files (the block writer
// sets it; the head leaves it 0). MinTime and MaxTime are the times of the
// chunk's first and last samples.
type Meta struct {
	Ref              uint64
	Chunk            Chunk
	MinTime, MaxTime int64
}
