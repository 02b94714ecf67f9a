package chunks

// Seek points of open XOR chunks.
//
// A chunk iterator that seeks decodes every sample before the target: for
// an instant query near the newest sample of a 120-sample chunk, a hundred
// samples to return twenty. The appender of an open chunk therefore keeps
// the decoder's state after samples 32, 64 and 96 (the seek points), and a
// snapshot taken for a read starting at mint carries the newest point
// before mint, from which its iterator's Seek resumes decoding. Closed
// chunks keep no points: their appender goes with the cut. Points are kept
// only for chunks that have been read: their first SnapshotFrom allocates
// them (72 bytes) and fills them with one decode of the chunk, so a series
// no query reads costs nothing and every read uses them.

// seekEvery is the distance in samples between two seek points.
const seekEvery = 32

// seekPoint is the decoder's state just after a chunk's num-th sample:
// what xorIterator holds there; num is 0 for no point. 24 bytes, so that
// an appender's three cost 72.
type seekPoint struct {
	t      int64
	vbits  uint64
	tDelta uint32 // points are not kept for larger deltas
	bitPos uint16 // of the next sample's first bit, header included
	// packed holds num (in units of seekEvery) in bits 12–15, trailing in
	// bits 6–11 and leading in bits 0–5 (noLeading as 63).
	packed uint16
}

// packSeek packs a point's num, leading and trailing.
func packSeek(num uint16, leading, trailing uint8) uint16 {
	return num/seekEvery<<12 | uint16(trailing)<<6 | uint16(min(leading, 63))
}

// samples returns how many samples the point follows (0: no point).
func (p *seekPoint) samples() uint16 { return p.packed >> 12 * seekEvery }

// window returns the point's leading and trailing.
func (p *seekPoint) window() (leading, trailing uint8) {
	leading = uint8(p.packed & 63)
	if leading == 63 {
		leading = noLeading
	}
	return leading, uint8(p.packed >> 6 & 63)
}

// recordSeekPoint keeps the appender's state after its num-th sample if
// num is a seek point's. Called by Append once a.seek is allocated.
func (a *XORAppender) recordSeekPoint() {
	k := int(a.num)/seekEvery - 1
	w := &a.c.w
	pos := len(w.buf)*8 - int(w.free)
	if a.num%seekEvery != 0 || k < 0 || k >= len(a.seek) || a.tDelta > 1<<32-1 || pos > 1<<16-1 {
		return
	}
	a.seek[k] = seekPoint{
		t: a.t, vbits: a.vbits, tDelta: uint32(a.tDelta), bitPos: uint16(pos),
		packed: packSeek(a.num, a.leading, a.trailing),
	}
}

// fillSeekPoints records the points of the samples a's chunk already
// holds, by decoding it once: the chunk's first read pays one decode, and
// every read from then on (and every later Append) has the points. A
// chunk that does not decode keeps the points before the damage.
func (a *XORAppender) fillSeekPoints() {
	var it xorIterator
	it.reset(a.c.w.buf)
	for k := range a.seek {
		n := uint16(k+1) * seekEvery
		if n > a.num {
			return
		}
		for it.read < n {
			if it.Next() == ValNone {
				return
			}
		}
		pos := it.br.bitPos()
		if it.tDelta > 1<<32-1 || pos > 1<<16-1 {
			continue
		}
		a.seek[k] = seekPoint{
			t: it.t, vbits: it.vbits, tDelta: uint32(it.tDelta), bitPos: uint16(pos),
			packed: packSeek(n, it.leading, it.trailing),
		}
	}
}

// SnapshotFrom is Snapshot for a read of samples at or after mint, given
// a, the chunk's appender (nil, or another chunk's, is ignored): the
// snapshot's iterator's Seek to a time after mint may start from the
// newest of a's seek points before mint instead of the first sample. Take
// it under the same rule as Snapshot, which, for a, is also the rule for
// Append: the first call allocates a's points and fills them by decoding
// the chunk once; Append records them from then on.
func (c *XORChunk) SnapshotFrom(a *XORAppender, mint int64) XORSnapshot {
	s := c.Snapshot()
	if a == nil || a.c != c {
		return s
	}
	if a.seek == nil {
		a.seek = new([3]seekPoint)
		a.fillSeekPoints()
	}
	for k := len(a.seek) - 1; k >= 0; k-- {
		if p := a.seek[k]; p.samples() != 0 && p.samples() <= s.total && p.t < mint {
			s.from = p
			break
		}
	}
	return s
}

// seekTo moves the iterator to point p if that skips samples before t: p
// is after the current sample and not after t. Only for points of the
// chunk the iterator reads.
func (it *xorIterator) seekTo(p *seekPoint, t int64) {
	if n := p.samples(); n == 0 || n <= it.read || p.t > t || n > it.total {
		return
	}
	it.read, it.t, it.vbits, it.tDelta = p.samples(), p.t, p.vbits, uint64(p.tDelta)
	it.leading, it.trailing = p.window()
	it.br.seekBit(int(p.bitPos))
}
