package tsdb

import (
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/tombstones"
)

// Late samples in the head.
//
// With Options.OutOfOrderTimeWindow set, a sample older than its series'
// newest, or older than the head's appendable range, is accepted if it is
// no older than the head's newest sample minus the window. Such a late sample
// cannot go into the series' chunks, which only grow at the end; it goes
// to the series' lateSeries instead: an open buffer of up to lateOpenMax
// samples kept sorted by time, which is encoded into closed late chunks
// when full. Late chunks may overlap each other and the in-order chunks in
// time, but never straddle a block-range boundary, so truncation drops
// them whole, like in-order chunks.
//
// No two samples of a series, in-order or late, share a timestamp: a late
// sample at the time of an existing one is a no-op if it is the same
// sample and ErrDuplicateSampleForTimestamp otherwise (sampleAtLocked looks
// the time up in the chunk that covers it).
//
// Isolation. Late samples do not take slots in the series' write-ID ring,
// which numbers samples in append order at the end of the series: each
// keeps its commit's write ID itself (see isolation.go for the rules and
// lateVisible). Reads capture the late samples they may see in their
// range and merge them with the in-order samples (headSeries.late).
//
// Late samples behind the head's range. A late sample may fall into a
// range already written into a block. It waits in the head, below the
// DB's headMint (queriers read the head from its oldest sample on, see
// newQuerier), until the next head compaction: freezeLate marks every late
// chunk before the end of the range that compaction writes, the
// compaction writes each older range holding one into a block of its own
// (overlapping the block already there; block compaction merges them), and
// its truncation drops exactly the chunks it marked. Late samples that
// arrive meanwhile are not marked and wait for the next compaction; the
// WAL checkpoint keeps their series' samples from the oldest of them on.
//
// The WAL logs late samples in their commit's records like any other, so
// a commit replays whole or not at all; replay takes the samples older
// than their series' newest as late ones, whatever the window is then,
// and, while the window is on, those before the head's range. The commit
// also copies its late samples to the WBL, for Prometheus (see wal.go).

// lateOpenMax is the number of samples of a series' open late buffer; the
// next late sample encodes them into chunks.
const lateOpenMax = 32

// lateSeries is a series' late samples. It is guarded by the series' lock.
type lateSeries struct {
	// open holds the newest late samples, sorted by time.
	open []lateSample
	// chunks are closed late chunks, in the order they were cut. Readers
	// may keep their chunk after dropping the series lock (it never
	// changes); truncation replaces the slice.
	chunks []lateChunk
	// times index the sample times of two of the series' in-order XOR
	// chunks (heap or mapped, head_mmap.go), for sampleAtLocked: a late
	// sample is nearly always at a time its chunk lacks, which the index
	// tells without decoding the chunk. Live, a sample 1 to 10 minutes
	// late falls into the open chunk or, after a cut, the one before; in
	// a WAL replay over mapped chunks, into the one or two chunks around
	// the time the replay has reached, which may be far from the newest.
	// So a chunk neither refers to takes the least recently used one,
	// unless that indexes the open chunk (see timesLocked). recent is the
	// index of the one used last.
	times  [2]chunks.XORTimes
	recent uint8
}

// lateChunk is an encoded run of late samples within one block range.
type lateChunk struct {
	chunk            chunks.Chunk
	minTime, maxTime int64
	// ids are the write IDs of its samples in chunk order; nil once every
	// one of them is visible to all reads (see settledIDs).
	ids []uint64
	// gen is the head compaction that is writing the chunk into a block
	// (freezeLate), 0 while none is. A compaction's truncation drops the
	// chunks of its generation and older ones, whatever their time.
	gen uint64
}

// lateSample is a late sample in the open buffer, or captured by a read:
// the float v unless h or fh is set, and its commit's write ID.
type lateSample struct {
	t, st int64
	v     float64
	h     *histogram.Histogram
	fh    *histogram.FloatHistogram
	id    uint64
}

// hasLateLocked reports whether the series holds late samples. Requires
// s.mu held.
func (s *memSeries) hasLateLocked() bool {
	return s.x != nil && s.x.late != nil
}

// appendLateLocked adds p, a committed sample no later than the series'
// newest, as a late sample with write ID id. It returns "" if p was added
// or is already there (the same sample at the same time), else the reason
// it is dropped; added reports whether it was added (the caller counts
// those in tsdb_head_late_samples_appended_total, once per commit: the
// counter is shared by every writer). inOrder says whether to look for a
// sample at p's time in the in-order chunks too; it is the iterator to
// reuse for decoding chunks (see sampleAtLocked). Requires s.mu held;
// takes no lock.
func (s *memSeries) appendLateLocked(h *head, p *pendingSample, id, lowWatermark uint64, inOrder bool, it *chunks.Iterator) (reason string, added bool) {
	if inOrder {
		if q, ok := s.inOrderSampleAtLocked(p.t, it); ok {
			return sameOrDuplicate(p, q), false
		}
	}
	l := s.extraLocked().late
	if l == nil {
		// The buffer at its full size at once: it is reused after every
		// cut, and growing it (samples hold pointers) cost more than
		// allocating it whole.
		l = &lateSeries{open: make([]lateSample, 0, lateOpenMax)}
		s.x.late = l
	}
	// One search of the open buffer finds a sample at p.t or p's place.
	i, found := slices.BinarySearchFunc(l.open, p.t, func(a lateSample, t int64) int { return cmpInt64(a.t, t) })
	if found {
		o := &l.open[i]
		return sameOrDuplicate(p, &pendingSample{t: o.t, st: o.st, v: o.v, h: o.h, fh: o.fh}), false
	}
	if q, ok := s.lateChunkSampleAtLocked(p.t, it); ok {
		return sameOrDuplicate(p, q), false
	}
	if len(l.open) >= lateOpenMax {
		l.cut(h, lowWatermark)
		i = 0
	}
	if len(l.open) == cap(l.open) && cap(l.open) < lateOpenMax {
		// Trimmed after a replay (trimLateAfterReplay): back to full
		// size in one step.
		l.open = append(make([]lateSample, 0, lateOpenMax), l.open...)
	}
	if !h.isolationOn {
		id = 0 // every read sees everything: no ID to keep
	}
	l.open = slices.Insert(l.open, i, lateSample{t: p.t, st: p.st, v: p.v, h: p.h, fh: p.fh, id: id})
	return "", true
}

// sameOrDuplicate is appendLateLocked's verdict on p meeting q, a stored
// sample at its time: "" if it is the same sample, else reasonDuplicate.
func sameOrDuplicate(p, q *pendingSample) string {
	if sameStoredSample(p, q) == errNoop {
		return ""
	}
	return reasonDuplicate
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cut encodes the open buffer into closed chunks, one run per block range
// (and more where the kind of sample changes or a histogram chunk is cut),
// and forgets the write IDs of the chunks whose samples every read sees.
func (l *lateSeries) cut(h *head, lowWatermark uint64) {
	for i := range l.chunks {
		if c := &l.chunks[i]; c.ids != nil && settledIDs(c.ids, lowWatermark) {
			c.ids = nil
		}
	}
	open, had := l.open, len(l.chunks)
	for len(open) > 0 {
		end := rangeEnd(open[0].t, h.chunkRange)
		n := 1
		for n < len(open) && open[n].t < end {
			n++
		}
		l.chunks = append(l.chunks, encodeLate(open[:n], lowWatermark, h.samplesPerChunk)...)
		open = open[n:]
	}
	h.metrics.chunks.Add(float64(len(l.chunks) - had))
	clear(l.open)
	l.open = l.open[:0]
}

// encodeLate encodes samples, sorted by time and within one block range,
// into chunks as a block would hold them (see reencode).
func encodeLate(samples []lateSample, lowWatermark uint64, samplesPerChunk int) []lateChunk {
	meta := BlockMeta{MinTime: samples[0].t, MaxTime: samples[len(samples)-1].t + 1}
	metas, err := reencode(&lateIterator{samples: samples, i: -1}, &meta, samplesPerChunk, nil)
	if err != nil {
		// The samples were validated when they were appended.
		panic(fmt.Sprintf("tsdb: encode late samples: %v", err))
	}
	out := make([]lateChunk, len(metas))
	ids := make([]uint64, len(samples))
	for i := range samples {
		ids[i] = samples[i].id
	}
	for i, m := range metas {
		n := m.Chunk.NumSamples()
		out[i] = lateChunk{chunk: m.Chunk, minTime: m.MinTime, maxTime: m.MaxTime}
		if !settledIDs(ids[:n], lowWatermark) {
			out[i].ids = ids[:n:n]
		}
		ids = ids[n:]
	}
	return out
}

// sampleAtLocked returns the series' sample at t, late or (if inOrder)
// in-order, if it has one. it is an iterator to reuse for decoding chunks
// (nil: allocate one); it is left pointing into one of the series' chunks.
// A series with late samples looks t up in its in-order XOR chunks with
// lateSeries.times, which decodes each of the two chunks it indexes once,
// not once per lookup. Requires s.mu held.
func (s *memSeries) sampleAtLocked(t int64, inOrder bool, it *chunks.Iterator) (*pendingSample, bool) {
	if inOrder {
		if p, ok := s.inOrderSampleAtLocked(t, it); ok {
			return p, true
		}
	}
	if !s.hasLateLocked() {
		return nil, false
	}
	l := s.x.late
	if n := len(l.open); n > 0 && l.open[0].t <= t && t <= l.open[n-1].t {
		if j, ok := slices.BinarySearchFunc(l.open, t, func(a lateSample, t int64) int { return cmpInt64(a.t, t) }); ok {
			o := &l.open[j]
			return &pendingSample{t: t, st: o.st, v: o.v, h: o.h, fh: o.fh}, true
		}
	}
	return s.lateChunkSampleAtLocked(t, it)
}

// inOrderSampleAtLocked is sampleAtLocked for the in-order chunks alone.
// Requires s.mu held.
func (s *memSeries) inOrderSampleAtLocked(t int64, it *chunks.Iterator) (*pendingSample, bool) {
	i, _ := slices.BinarySearchFunc(s.chunks, t, func(c memChunk, t int64) int { return cmpInt64(c.maxTime, t) })
	if i < len(s.chunks) && s.chunks[i].minTime <= t && s.inChunkLocked(i, t) {
		if it == nil {
			it = new(chunks.Iterator)
		}
		return chunkSampleAt(s.chunks[i].chunk, t, it)
	}
	return nil, false
}

// lateChunkSampleAtLocked is sampleAtLocked for the closed late chunks
// alone. Requires s.mu held.
func (s *memSeries) lateChunkSampleAtLocked(t int64, it *chunks.Iterator) (*pendingSample, bool) {
	if !s.hasLateLocked() {
		return nil, false
	}
	for j := range s.x.late.chunks {
		if c := &s.x.late.chunks[j]; c.minTime <= t && t <= c.maxTime {
			if it == nil {
				it = new(chunks.Iterator)
			}
			if p, ok := chunkSampleAt(c.chunk, t, it); ok {
				return p, true
			}
		}
	}
	return nil, false
}

// inChunkLocked reports whether the in-order chunk i, whose time range
// covers t, may hold a sample at t: false only if lateSeries.times (of a
// series with late samples) shows that chunk i, an XOR chunk in the heap or
// mapped from a head chunk file, has none there. Requires s.mu held.
func (s *memSeries) inChunkLocked(i int, t int64) bool {
	if !s.hasLateLocked() {
		return true
	}
	c := s.chunks[i].chunk
	if c.Encoding() != chunks.EncXOR {
		return true
	}
	_, found, indexed := s.timesLocked(c).Index(c, t)
	return found || !indexed
}

// timesLocked returns the index in lateSeries.times to look c, one of the
// series' in-order XOR chunks, up in: the one that refers to c, else the
// least recently used one, else (if that one indexes the open chunk, an
// XORChunk that appends grow, to which lookups come back) the other one.
// It records the one it returns as the most recently used. Requires s.mu
// held and the series to have late samples.
func (s *memSeries) timesLocked(c chunks.Chunk) *chunks.XORTimes {
	l := s.x.late
	ts := &l.times
	var k uint8
	switch {
	case ts[0].Chunk() == c:
		k = 0
	case ts[1].Chunk() == c:
		k = 1
	default:
		k = 1 - l.recent
		if open, ok := s.chunks[len(s.chunks)-1].chunk.(*chunks.XORChunk); ok && ts[k].Chunk() == chunks.Chunk(open) {
			k = l.recent
		}
	}
	l.recent = k
	return &ts[k]
}

// trimLateAfterReplay drops the sample time indexes (lateSeries.times) of
// every series, buffers included, and trims each open late buffer to its
// samples (nil if none). The WAL replay calls it when done: its duplicate
// checks of late samples indexed chunks all along the head's range, two
// per series, which live late appends (into the open chunk or the one
// before, mostly) rarely look at again; and a full-size open buffer of
// every series with late samples would stay in the heap until its next
// cut. appendLateLocked grows a trimmed buffer back to full size. Takes
// each series lock in turn.
func (h *head) trimLateAfterReplay() {
	h.series.refs.each(func(s *memSeries) {
		s.mu.Lock()
		if s.hasLateLocked() {
			l := s.x.late
			l.times = [2]chunks.XORTimes{}
			switch {
			case len(l.open) == 0:
				l.open = nil // a zero-length slice of the buffer would keep it
			case len(l.open) < cap(l.open):
				l.open = slices.Clone(l.open)
			}
		}
		s.mu.Unlock()
	})
}

// forgetTimes resets the indexes in l.times of the chunks in dropped, which
// truncation removes from the series: an index keeps its chunk, and so a
// mapped chunk's file mapping, reachable. Requires the series lock held.
func (l *lateSeries) forgetTimes(dropped []memChunk) {
	for k := range l.times {
		if c := l.times[k].Chunk(); c != nil && slices.ContainsFunc(dropped, func(m memChunk) bool { return m.chunk == c }) {
			l.times[k].Reset()
		}
	}
}

// sameStoredSample is sameTimeOrder for q read back from a chunk (by
// sampleAtLocked): errNoop if p is the sample q is, else
// ErrDuplicateSampleForTimestamp. A histogram chunk stores its samples in
// one bucket layout, so an appended histogram may come back with empty
// buckets it did not have (when a later sample of the chunk added buckets);
// histograms of the same kind are therefore the same sample if they are
// equal but for their layouts: their non-empty buckets are.
func sameStoredSample(p, q *pendingSample) error {
	if err := sameTimeOrder(p, q); err == errNoop {
		return err
	}
	switch {
	case p.h != nil && q.h != nil && p.h.Schema == q.h.Schema && p.h.Count == q.h.Count &&
		math.Float64bits(p.h.Sum) == math.Float64bits(q.h.Sum) &&
		p.h.ZeroThreshold == q.h.ZeroThreshold && p.h.ZeroCount == q.h.ZeroCount &&
		(!p.h.UsesCustomBuckets() || slices.Equal(p.h.CustomValues, q.h.CustomValues)) &&
		sameNonEmptyBuckets(p.h.PositiveBucketSeq(), q.h.PositiveBucketSeq()) &&
		sameNonEmptyBuckets(p.h.NegativeBucketSeq(), q.h.NegativeBucketSeq()):
		return errNoop
	case p.fh != nil && q.fh != nil && p.fh.Schema == q.fh.Schema &&
		math.Float64bits(p.fh.Count) == math.Float64bits(q.fh.Count) &&
		math.Float64bits(p.fh.Sum) == math.Float64bits(q.fh.Sum) &&
		p.fh.ZeroThreshold == q.fh.ZeroThreshold &&
		math.Float64bits(p.fh.ZeroCount) == math.Float64bits(q.fh.ZeroCount) &&
		(!p.fh.UsesCustomBuckets() || slices.Equal(p.fh.CustomValues, q.fh.CustomValues)) &&
		sameNonEmptyBuckets(p.fh.PositiveBucketSeq(), q.fh.PositiveBucketSeq()) &&
		sameNonEmptyBuckets(p.fh.NegativeBucketSeq(), q.fh.NegativeBucketSeq()):
		return errNoop
	}
	return ErrDuplicateSampleForTimestamp
}

// sameNonEmptyBuckets reports whether a and b yield the same buckets (index
// and count) once the empty ones are left out.
func sameNonEmptyBuckets[C uint64 | float64](a, b iter.Seq[histogram.Bucket[C]]) bool {
	nonEmpty := func(seq iter.Seq[histogram.Bucket[C]]) []histogram.Bucket[C] {
		var out []histogram.Bucket[C]
		for bk := range seq {
			if bk.Count != 0 {
				out = append(out, bk)
			}
		}
		return out
	}
	return slices.EqualFunc(nonEmpty(a), nonEmpty(b), func(x, y histogram.Bucket[C]) bool {
		return x.Index == y.Index && x.Count == y.Count
	})
}

// chunkSampleAt returns the sample of c at t, if it has one, decoding c
// with *reuse (which it sets to the iterator it used). The caller holds the
// lock of c's series if c is open.
func chunkSampleAt(c chunks.Chunk, t int64, reuse *chunks.Iterator) (*pendingSample, bool) {
	it := c.Iterator(*reuse)
	*reuse = it
	vt := it.Seek(t)
	if vt == chunks.ValNone || it.AtT() != t {
		return nil, false
	}
	ls := readLateSample(it, vt)
	return &pendingSample{t: t, st: ls.st, v: ls.v, h: ls.h, fh: ls.fh}, true
}

// readLateSample returns the sample of type vt that it is on, its
// histogram (if any) a copy of its own.
func readLateSample(it chunks.Iterator, vt chunks.ValueType) lateSample {
	ls := lateSample{t: it.AtT(), st: it.AtST()}
	switch vt {
	case chunks.ValFloat:
		_, ls.v = it.At()
	case chunks.ValHistogram:
		_, ls.h = it.AtHistogram(nil)
	default:
		_, ls.fh = it.AtFloatHistogram(nil)
	}
	return ls
}

// truncateLateLocked drops the late chunks that head compactions up to
// generation gen froze (and so wrote into blocks) and returns their
// number. Late samples frozen by no compaction stay, whatever their time:
// they arrived after their range was written. Requires s.mu held.
func (s *memSeries) truncateLateLocked(gen uint64) int {
	if !s.hasLateLocked() {
		return 0
	}
	l := s.x.late
	keep := make([]lateChunk, 0, len(l.chunks))
	for _, c := range l.chunks {
		if c.gen == 0 || c.gen > gen {
			keep = append(keep, c)
		}
	}
	dropped := len(l.chunks) - len(keep)
	l.chunks = keep
	if len(l.chunks) == 0 && len(l.open) == 0 {
		s.x.late = nil
	}
	return dropped
}

// freezeLate prepares head compaction gen, which writes everything before
// before into blocks: every series' late samples before before are encoded
// into late chunks (cutting the open buffer) and those chunks are marked
// with gen, so that the compaction's truncation drops exactly them. It
// returns the start of each block range before before-chunkRange (older
// than the range the compaction writes from the in-order chunks) holding a
// frozen chunk, ascending: the compaction writes each into a block of its
// own, which overlaps the blocks already there.
//
// Late samples appended after freezeLate went over their series stay in
// the open buffer or in chunks with gen 0 until a later compaction. The
// caller holds cmtx; takes each series lock in turn.
func (h *head) freezeLate(before int64, gen uint64) []int64 {
	lowWatermark := h.iso.lowWatermark()
	oldest := before - h.chunkRange
	starts := map[int64]struct{}{}
	h.series.refs.each(func(s *memSeries) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.hasLateLocked() {
			return
		}
		l := s.x.late
		if len(l.open) > 0 && l.open[0].t < before {
			l.cut(h, lowWatermark)
		}
		for i := range l.chunks {
			c := &l.chunks[i]
			if c.maxTime >= before {
				continue
			}
			c.gen = gen
			if c.minTime < oldest {
				starts[rangeEnd(c.minTime, h.chunkRange)-h.chunkRange] = struct{}{}
			}
		}
	})
	out := make([]int64, 0, len(starts))
	for t := range starts {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// captureLateLocked returns the late samples of the series in [mint, maxt]
// that snap sees, sorted by time. Requires s.mu held.
func (s *memSeries) captureLateLocked(snap *readSnapshot, mint, maxt int64) []lateSample {
	if !s.hasLateLocked() {
		return nil
	}
	l := s.x.late
	var out []lateSample
	for _, c := range l.chunks {
		if c.maxTime < mint || c.minTime > maxt {
			continue
		}
		it := c.chunk.Iterator(nil)
		for j := 0; ; j++ {
			vt := it.Next()
			if vt == chunks.ValNone {
				break
			}
			t := it.AtT()
			if t < mint || t > maxt || !lateVisible(snap, c.ids, j) {
				continue
			}
			out = append(out, readLateSample(it, vt))
		}
	}
	for _, o := range l.open {
		if o.t >= mint && o.t <= maxt && snap.visible(o.id) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b lateSample) int { return cmpInt64(a.t, b.t) })
	return out
}

// lateBoundsLocked returns the time range of the series' late samples;
// math.MaxInt64, math.MinInt64 if it has none. Requires s.mu held.
func (s *memSeries) lateBoundsLocked() (mint, maxt int64) {
	mint, maxt = math.MaxInt64, math.MinInt64
	if !s.hasLateLocked() {
		return mint, maxt
	}
	l := s.x.late
	for _, c := range l.chunks {
		mint, maxt = min(mint, c.minTime), max(maxt, c.maxTime)
	}
	if n := len(l.open); n > 0 {
		mint, maxt = min(mint, l.open[0].t), max(maxt, l.open[n-1].t)
	}
	return mint, maxt
}

// lateIterator iterates late samples sorted by time, skipping those in
// deleted. It never fails.
type lateIterator struct {
	samples []lateSample
	deleted tombstones.Intervals
	i       int
}

func (it *lateIterator) Next() chunks.ValueType {
	for it.i++; it.i < len(it.samples); it.i++ {
		if !it.deleted.Contains(it.samples[it.i].t) {
			return it.cur()
		}
	}
	it.i = len(it.samples)
	return chunks.ValNone
}

func (it *lateIterator) Seek(t millis) chunks.ValueType {
	if it.i >= 0 && it.i < len(it.samples) && it.samples[it.i].t >= t {
		return it.cur()
	}
	for it.i < len(it.samples) && (it.i < 0 || it.samples[it.i].t < t) {
		if it.Next() == chunks.ValNone {
			return chunks.ValNone
		}
	}
	return it.cur()
}

func (it *lateIterator) cur() chunks.ValueType {
	if it.i < 0 || it.i >= len(it.samples) {
		return chunks.ValNone
	}
	switch s := &it.samples[it.i]; {
	case s.h != nil:
		return chunks.ValHistogram
	case s.fh != nil:
		return chunks.ValFloatHistogram
	}
	return chunks.ValFloat
}

func (it *lateIterator) At() (int64, float64) {
	if vt := it.cur(); vt != chunks.ValFloat {
		panic(wrongValueType("At", vt))
	}
	s := &it.samples[it.i]
	return s.t, s.v
}

func (it *lateIterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	if vt := it.cur(); vt != chunks.ValHistogram {
		panic(wrongValueType("AtHistogram", vt))
	}
	s := &it.samples[it.i]
	if h == nil {
		return s.t, s.h.Copy()
	}
	*h = *s.h.Copy()
	return s.t, h
}

func (it *lateIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	var src *histogram.FloatHistogram
	switch s := &it.samples[it.i]; it.cur() {
	case chunks.ValHistogram:
		src = s.h.ToFloat()
	case chunks.ValFloatHistogram:
		src = s.fh.Copy()
	default:
		panic(wrongValueType("AtFloatHistogram", it.cur()))
	}
	if fh == nil {
		return it.samples[it.i].t, src
	}
	*fh = *src
	return it.samples[it.i].t, fh
}

func (it *lateIterator) AtT() int64  { return it.samples[it.i].t }
func (it *lateIterator) AtST() int64 { return it.samples[it.i].st }
func (it *lateIterator) Err() error  { return nil }

// withLateIterator merges a series' in-order samples with its late ones.
// No two of them share a time (see sampleAtLocked), so it only picks the
// earlier of the two it is on, and returns values straight from the
// iterator that has it.
type withLateIterator struct {
	in           chunks.Iterator
	late         lateIterator
	inVT, lateVT chunks.ValueType // what each is on; ValNone once done
	onLate       bool             // the current sample is late's
	begun        bool
}

func (m *withLateIterator) Next() chunks.ValueType {
	switch {
	case !m.begun:
		m.begun = true
		m.inVT, m.lateVT = m.in.Next(), m.late.Next()
	case m.onLate:
		m.lateVT = m.late.Next()
	case m.inVT != chunks.ValNone:
		m.inVT = m.in.Next()
	}
	return m.pick()
}

func (m *withLateIterator) Seek(t millis) chunks.ValueType {
	if !m.begun {
		m.begun = true
		m.inVT, m.lateVT = m.in.Seek(t), m.late.Seek(t)
		return m.pick()
	}
	if m.inVT != chunks.ValNone && m.in.AtT() < t {
		m.inVT = m.in.Seek(t)
	}
	if m.lateVT != chunks.ValNone && m.late.AtT() < t {
		m.lateVT = m.late.Seek(t)
	}
	return m.pick()
}

// pick positions m on the earlier of the samples in and late are on.
func (m *withLateIterator) pick() chunks.ValueType {
	switch {
	case m.lateVT == chunks.ValNone:
		m.onLate = false
		return m.inVT
	case m.inVT == chunks.ValNone || m.late.AtT() < m.in.AtT():
		m.onLate = true
		return m.lateVT
	}
	m.onLate = false
	return m.inVT
}

func (m *withLateIterator) cur() chunks.Iterator {
	if m.onLate {
		return &m.late
	}
	return m.in
}

func (m *withLateIterator) At() (int64, float64) { return m.cur().At() }
func (m *withLateIterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	return m.cur().AtHistogram(h)
}
func (m *withLateIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	return m.cur().AtFloatHistogram(fh)
}
func (m *withLateIterator) AtT() int64  { return m.cur().AtT() }
func (m *withLateIterator) AtST() int64 { return m.cur().AtST() }
func (m *withLateIterator) Err() error  { return m.in.Err() }
