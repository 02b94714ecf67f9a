package tsdb

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// ctxCheckInterval is how many series a select handles between two checks
// of its context: often enough to stop within microseconds, rarely enough
// not to show in profiles.
const ctxCheckInterval = 128

// selectSeries returns the head series matching ms that have samples in
// [mint, maxt] visible to snap, sorted by labels. owner is kept reachable by
// the returned set (it is the Querier whose snapshot snap is, so that the
// snapshot cannot be released by a cleanup while the set is in use).
func (h *head) selectSeries(ctx context.Context, owner any, snap *readSnapshot, tombs *headTombstones, mint, maxt int64, ms []*labels.Matcher) SeriesSet {
	if mint > h.MaxTime() || maxt < h.MinTime() {
		// Nothing committed in range. A commit in flight may be extending
		// the range right now, but its samples are not visible to snap, and
		// without isolation a read may miss a concurrent commit anyway.
		if h.isolationOn || h.NumSeries() == 0 {
			return emptySeriesSet{}
		}
	}
	p, err := index.PostingsForMatchers(h.postings, ms...)
	if err != nil {
		return errSeriesSet{fmt.Errorf("tsdb: select: %w", err)}
	}
	var series []*memSeries
	if len(ms) == 0 {
		// Every series (a block writer's selection): size the slice once,
		// not by the quarter-steps append grows large slices in.
		series = make([]*memSeries, 0, h.NumSeries())
	}
	for n := 0; p.Next(); n++ {
		if n%ctxCheckInterval == 0 {
			if err := ctx.Err(); err != nil {
				return errSeriesSet{err}
			}
		}
		if s := h.series.getByRef(SeriesRef(p.At())); s != nil {
			series = append(series, s)
		}
	}
	if err := p.Err(); err != nil {
		return errSeriesSet{fmt.Errorf("tsdb: select: %w", err)}
	}
	h.sortSeries(series)
	return &headSeriesSet{ctx: ctx, owner: owner, snap: snap, tombs: tombs, mint: mint, maxt: maxt, series: series}
}

// headSeriesSet iterates head series, capturing each one's data under its
// lock when Next reaches it.
type headSeriesSet struct {
	ctx        context.Context
	owner      any // keeps the Querier (and so snap) alive
	snap       *readSnapshot
	tombs      *headTombstones
	mint, maxt int64

	// mu protects the fields below: Next holds it, and so does freeze,
	// which the Querier's Close may call from another goroutine. Lock
	// order: the querier's mu and setsMu, then this, then memSeries.mu.
	mu     lockorder.Mutex[lockorder.HeadSeriesSet]
	series []*memSeries // until frozen: the series to capture, from i on
	// frozen: Close captured the series from i on into captured, and snap
	// may be released; Next no longer reads the live series.
	frozen   bool
	captured []*headSeries
	i        int
	cur      *headSeries
	err      error
	invBuf   []uint64
	spare    *headSeries // see headSeries.recycle; nil if none
	// scratch is the iterator Next positions on the next series' first
	// sample: one left over from a series without visible samples, or one
	// a caller handed back as reuse to Iterator. Atomic because Iterator
	// may be called from another goroutine than Next.
	scratch atomic.Pointer[headIterator]
}

func (ss *headSeriesSet) Next() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for ss.err == nil {
		n := len(ss.series)
		if ss.frozen {
			n = len(ss.captured)
		}
		if ss.i >= n {
			return false
		}
		if ss.i%ctxCheckInterval == 0 {
			if err := ss.ctx.Err(); err != nil {
				ss.err = err
				return false
			}
		}
		// A series is returned only if the read sees a sample of it in
		// range: which series come back must not depend on how far a
		// commit in flight has got. The iterator that found the first
		// sample is kept for the first Iterator call.
		it := ss.scratch.Swap(nil)
		if ss.spare == nil && !ss.frozen {
			// One allocation for what a returned series needs.
			b := &selectedSeries{}
			b.hs.chunks = b.chunks[:0]
			ss.spare = &b.hs
			if it == nil {
				it = &b.it
			}
		} else if it == nil {
			it = &headIterator{}
		}
		var hs *headSeries
		var err error
		if ss.frozen {
			hs = ss.captured[ss.i]
			ss.captured[ss.i] = nil // the set no longer holds what it returned
			ss.i++
			if ok, perr := hs.positionFirst(it); !ok {
				hs, err = nil, perr
			}
		} else {
			s := ss.series[ss.i]
			ss.i++
			hs, err = s.firstVisible(ss.snap, ss.tombs.get(s.ref), ss.mint, ss.maxt, &ss.invBuf, it, ss.spare)
			if hs != nil || err != nil {
				ss.spare = nil
			} // else the spare is left for the next series
		}
		if err != nil {
			ss.err = err
			return false
		}
		if hs == nil {
			ss.scratch.Store(it)
			continue
		}
		it.peeked = it.valid
		hs.first, hs.set = it, ss
		ss.cur = hs
		return true
	}
	return false
}

// selectedSeries is what a series the set returns usually needs, in one
// allocation: the captured series, its iterator and room for one captured
// chunk.
type selectedSeries struct {
	hs     headSeries
	it     headIterator
	chunks [1]capturedChunk
}

// captureLocked captures what the read sees of s, nil if nothing. The
// caller holds ss.mu and the snapshot is not released.
func (ss *headSeriesSet) captureLocked(s *memSeries) *headSeries {
	return s.captureUndeleted(ss.snap, ss.tombs.get(s.ref), ss.mint, ss.maxt, &ss.invBuf, nil)
}

// freeze captures the series Next has not reached yet, so that the set no
// longer needs its snapshot: the Querier's Close calls it before releasing
// the snapshot, after which the head may drop the data, and forget the
// write IDs, that the read relies on. It ignores the set's context (Close
// has none); a set already done is left alone.
func (ss *headSeriesSet) freeze() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.frozen || ss.err != nil {
		return
	}
	var captured []*headSeries
	for _, s := range ss.series[ss.i:] {
		if hs := ss.captureLocked(s); hs != nil {
			captured = append(captured, hs)
		}
	}
	ss.frozen, ss.captured, ss.series, ss.i = true, captured, nil, 0
}

func (ss *headSeriesSet) At() Series { return ss.cur }
func (ss *headSeriesSet) Err() error { return ss.err }

// capturedChunk is a chunk a reader may use without any lock: a closed
// chunk, which never changes, or a snapshot of the open chunk, which
// iterates the samples it held at capture while appends go on.
//
// An open histogram chunk is copied instead: appends may rewrite its
// header, and a recoding replaces it.
type capturedChunk struct {
	chunk            chunks.Chunk       // a closed chunk or a copy of an open one; nil for an open XOR chunk
	open             chunks.XORSnapshot // the open XOR chunk as captured
	minTime, maxTime int64
}

func (c *capturedChunk) iterator(reuse chunks.Iterator) chunks.Iterator {
	if c.chunk == nil {
		return c.open.Iterator(reuse)
	}
	return c.chunk.Iterator(reuse)
}

// captureOpen captures the open chunk c, appended to by app if app is not
// nil, for a read from mint on. Requires the series' lock held.
func captureOpen(c chunks.Chunk, app *chunks.XORAppender, mint int64) (closed chunks.Chunk, open chunks.XORSnapshot) {
	if xc, ok := c.(*chunks.XORChunk); ok {
		// The snapshot's iterator can seek from the newest of app's seek
		// points before mint.
		return nil, xc.SnapshotFrom(app, mint)
	}
	cp, err := chunks.FromData(c.Encoding(), slices.Clone(c.Bytes()))
	if err != nil {
		// The head's own chunk always decodes.
		panic(fmt.Sprintf("tsdb: copy of open %s chunk: %v", c.Encoding(), err))
	}
	return cp, open
}

// headSeries is what one read saw of a series: the chunks overlapping its
// range and the samples in them it must not see.
type headSeries struct {
	lset       labels.Labels
	chunks     []capturedChunk
	hidden     *hiddenSamples // nil if the read sees every sample it captured
	deleted    tombstones.Intervals
	mint, maxt int64
	// late are the series' late samples in [mint, maxt] the read sees,
	// sorted by time (head_late.go); nil if none.
	late  []lateSample
	first *headIterator  // positioned on the first in-order sample; handed out once
	set   *headSeriesSet // that found the series; takes back reused iterators
}

// hiddenSamples are the samples of a headSeries its read must not see.
type hiddenSamples struct {
	idx   []uint64 // their indices in the series, ascending
	first []uint64 // the index of the first sample of each captured chunk
}

// firstVisible captures what snap may read of s in [mint, maxt] outside
// the deleted intervals and positions it on the first sample there. It
// returns the captured series, or nil if the read sees no such sample.
// invBuf is scratch space for capture.
func (s *memSeries) firstVisible(snap *readSnapshot, deleted tombstones.Intervals, mint, maxt int64, invBuf *[]uint64, it *headIterator, spare *headSeries) (*headSeries, error) {
	hs := s.captureUndeleted(snap, deleted, mint, maxt, invBuf, spare)
	if hs == nil {
		return nil, nil
	}
	if ok, err := hs.positionFirst(it); !ok {
		return nil, err
	}
	return hs, nil
}

// positionFirst positions it on the first visible in-order sample of hs
// and reports whether hs has a visible sample, in-order or late.
func (hs *headSeries) positionFirst(it *headIterator) (bool, error) {
	it.reset(hs)
	if it.next() {
		return true, nil
	}
	if err := it.Err(); err != nil {
		return false, err
	}
	return slices.ContainsFunc(hs.late, func(l lateSample) bool { return !hs.deleted.Contains(l.t) }), nil
}

// bounds returns the time range of what hs captured.
func (hs *headSeries) bounds() (mint, maxt int64) {
	mint, maxt = math.MaxInt64, math.MinInt64
	if n := len(hs.chunks); n > 0 {
		mint, maxt = hs.chunks[0].minTime, hs.chunks[n-1].maxTime
	}
	if n := len(hs.late); n > 0 {
		mint, maxt = min(mint, hs.late[0].t), max(maxt, hs.late[n-1].t)
	}
	return mint, maxt
}

// captureUndeleted is capture without the series if deletions cover all
// of what was captured; the result carries the deletions.
func (s *memSeries) captureUndeleted(snap *readSnapshot, deleted tombstones.Intervals, mint, maxt int64, invBuf *[]uint64, spare *headSeries) *headSeries {
	hs := s.capture(snap, mint, maxt, invBuf, spare)
	if hs == nil {
		return nil
	}
	if lo, hi := hs.bounds(); coversAll(deleted, lo, hi) {
		return nil
	}
	hs.deleted = deleted
	return hs
}

// capture takes what snap may read of the series in [mint, maxt]. It
// returns nil if that is nothing. invBuf is scratch space for the
// invisible-sample computation. spare, if not nil, is a headSeries no
// longer in use (see headSeries.recycle) that capture may overwrite and
// return, and whose chunks slice it may reuse.
func (s *memSeries) capture(snap *readSnapshot, mint, maxt int64, invBuf *[]uint64, spare *headSeries) *headSeries {
	s.mu.Lock()
	defer s.mu.Unlock()
	late := s.captureLateLocked(snap, mint, maxt)
	newSeries := func(captured []capturedChunk) *headSeries {
		hs := spare
		if hs == nil {
			hs = &headSeries{}
		}
		spare = nil
		*hs = headSeries{lset: s.lset, chunks: captured, late: late, mint: mint, maxt: maxt}
		return hs
	}
	onlyLate := func() *headSeries {
		if late == nil {
			return nil
		}
		return newSeries(nil)
	}
	if len(s.chunks) == 0 {
		return onlyLate()
	}
	*invBuf = invisibleSamples(snap, &s.txs, s.total, (*invBuf)[:0])
	inv := *invBuf

	// Walk back from the newest chunk. Sample indices (hence the chunks'
	// sample counts, which cost a cache miss each) are needed only if the
	// read must hide some samples.
	var (
		captured []capturedChunk
		firsts   []uint64 // of the captured chunks (only if len(inv) > 0)
		seen     int      // samples captured (counted only if len(inv) > 0)
		next     = s.total
		hi       uint64 // index after the newest captured sample
	)
	last := len(s.chunks) - 1
	for i := last; i >= 0; i-- {
		mc := &s.chunks[i]
		var n, first uint64
		if len(inv) > 0 {
			n = uint64(mc.chunk.NumSamples())
			first = next - n
			next = first
		}
		if mc.maxTime < mint {
			break // older chunks end earlier still
		}
		if mc.minTime > maxt {
			continue
		}
		if captured == nil {
			// Chunks i down to lo overlap the range (in-order chunks
			// start and end later than the ones before them).
			lo := i
			for lo > 0 && s.chunks[lo-1].maxTime >= mint {
				lo--
			}
			if need := i - lo + 1; spare != nil && cap(spare.chunks) >= need {
				captured = spare.chunks[:0]
			} else {
				captured = make([]capturedChunk, 0, need)
			}
			hi = first + n
		}
		cc := capturedChunk{chunk: mc.chunk, minTime: mc.minTime, maxTime: mc.maxTime}
		if i == last {
			// The open chunk is appended to concurrently: take a snapshot
			// (under s.mu, as the chunks package requires).
			cc.chunk, cc.open = captureOpen(mc.chunk, s.app, mint)
		}
		captured = append(captured, cc)
		if len(inv) > 0 {
			firsts = append(firsts, first)
		}
		seen += int(n)
	}
	if len(captured) == 0 {
		return onlyLate()
	}
	slices.Reverse(captured)

	hs := newSeries(captured)
	if len(inv) > 0 {
		// Keep the indices that fall into captured chunks.
		slices.Reverse(firsts)
		lo := firsts[0]
		var idx []uint64
		for _, i := range inv {
			if i >= lo && i < hi {
				idx = append(idx, i)
			}
		}
		if len(idx) == seen {
			return onlyLate() // every in-order sample in range is hidden from this read
		}
		if len(idx) > 0 {
			hs.hidden = &hiddenSamples{idx: idx, first: firsts}
		}
	}
	return hs
}

func (hs *headSeries) Labels() labels.Labels { return hs.lset }

// wholeChunks implements wholeChunker for head compaction: closed chunks
// never change, so their bytes can go into a block as they are.
func (hs *headSeries) wholeChunks(mint, maxt int64, samplesPerChunk int, buf []chunks.Meta) ([]chunks.Meta, int, bool) {
	if hs.hidden != nil || len(hs.deleted) > 0 || hs.late != nil {
		return buf, 0, false
	}
	n := 0
	for i := range hs.chunks {
		c := &hs.chunks[i]
		if c.chunk == nil || c.minTime < mint || c.maxTime >= maxt {
			return buf, 0, false
		}
		k := c.chunk.NumSamples()
		if k == 0 || k > samplesPerChunk && !c.chunk.Encoding().IsHistogram() {
			return buf, 0, false
		}
		n += k
		buf = append(buf, chunks.Meta{Chunk: c.chunk, MinTime: c.minTime, MaxTime: c.maxTime})
	}
	if n == 0 {
		return buf, 0, false
	}
	// The iterator the set positioned on the first sample is not needed:
	// let the set position the next series with it instead of allocating.
	if it := hs.first; it != nil && hs.set != nil {
		hs.first = nil
		hs.set.scratch.CompareAndSwap(nil, it)
	}
	return buf, n, true
}

// recycle gives hs back to the set that returned it, for the set's next
// capture to overwrite instead of allocating. Only a caller that no longer
// uses hs, nor any iterator or slice it got from it (the chunks
// themselves excepted), may call it, and only before the set's next Next:
// the block writer, which reads each series once, in order.
func (hs *headSeries) recycle() {
	ss := hs.set
	if ss == nil {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.cur == hs && !ss.frozen {
		ss.spare = hs
	}
}

// maxSeries implements seriesCounter for writeBlockTmp: the set returns
// at most the series it has not yet looked at.
func (ss *headSeriesSet) maxSeries() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.frozen {
		return len(ss.captured) - ss.i
	}
	return len(ss.series) - ss.i
}

func (hs *headSeries) Iterator(reuse chunks.Iterator) chunks.Iterator {
	if hs.late != nil {
		// In-order and late samples merged; no sample has the time of
		// another (head_late.go), so the merge drops nothing.
		it := hs.first
		hs.first = nil
		if it == nil {
			it = &headIterator{}
			it.reset(hs)
		}
		return &withLateIterator{in: it, late: lateIterator{samples: hs.late, deleted: hs.deleted, i: -1}}
	}
	if it := hs.first; it != nil {
		hs.first = nil
		// The caller gives up reuse: let the set position the next series
		// with it instead of allocating.
		if r, ok := reuse.(*headIterator); ok && r != nil && r != it {
			hs.set.scratch.CompareAndSwap(nil, r)
		}
		return it
	}
	it, ok := reuse.(*headIterator)
	if !ok || it == nil {
		it = &headIterator{}
	}
	it.reset(hs)
	return it
}

// millis is a timestamp in milliseconds. Seek methods declare their
// argument with it only because go vet takes any Seek(int64) method for a
// broken io.Seeker.
type millis = int64

// headIterator iterates the visible samples of a headSeries in [mint, maxt].
type headIterator struct {
	s     *headSeries
	ci    int             // index of the current chunk in s.chunks
	it    chunks.Iterator // iterator of chunk ci, nil before the first
	idx   uint64          // sample index of the current sample
	inv   int             // first entry of s.hidden.idx that may be >= idx
	t     int64
	v     float64          // of a float sample; histograms are read from it
	vt    chunks.ValueType // of the current sample
	done  bool
	err   error
	valid bool
	// peeked: the current sample was found by the series set and not yet
	// returned by Next.
	peeked bool
	// plain is set while the current chunk lies inside [mint, maxt] and
	// the read hides nothing in it: Next then passes samples straight on.
	plain bool
	// skip is set when the chunk just opened may start before seekTo and
	// the read hides nothing in the series: its first step is then the
	// chunk iterator's own Seek, which passes the samples before seekTo
	// without returning each through this iterator. (The sample index idx
	// then falls behind, which only hidden samples would need.)
	skip   bool
	seekTo int64
	// space holds the first XOR chunk iterator, saving its allocation;
	// inSpace is set while it is it: an XOR chunk, read without the
	// interface, whose samples have no start time.
	space   chunks.IteratorSpace
	inSpace bool
}

func (it *headIterator) reset(hs *headSeries) {
	it.s, it.ci, it.idx, it.inv = hs, -1, 0, 0
	it.t, it.v, it.vt, it.done, it.err, it.valid, it.peeked, it.plain = 0, 0, chunks.ValNone, false, nil, false, false, false
	it.skip, it.inSpace = false, false
}

// nextRaw advances to the next sample of the captured chunks, whatever its
// time and visibility.
func (it *headIterator) nextRaw() bool {
	for {
		if it.ci >= 0 {
			var vt chunks.ValueType
			if it.skip {
				it.skip = false
				if vt = it.it.Seek(it.seekTo); vt != chunks.ValNone {
					it.read(vt)
					// Every later sample of the chunk is in range if it
					// ends in range: nothing hides or deletes them.
					it.plain = it.s.chunks[it.ci].maxTime <= it.s.maxt && it.t >= it.s.mint
					return true
				}
			} else {
				vt = it.it.Next()
			}
			if vt != chunks.ValNone {
				it.read(vt)
				return true
			}
		}
		if it.ci >= 0 {
			if err := it.it.Err(); err != nil {
				it.err = err
				return false
			}
		}
		if !it.nextChunk(it.ci + 1) {
			return false
		}
	}
}

// nextChunk positions the iterator before the first sample of chunk ci.
func (it *headIterator) nextChunk(ci int) bool {
	if ci >= len(it.s.chunks) || it.s.chunks[ci].minTime > it.s.maxt {
		return false
	}
	c := &it.s.chunks[ci]
	it.ci = ci
	if it.it == nil {
		it.it = it.space.Reuse()
	}
	it.it = c.iterator(it.it)
	it.inSpace = it.space.Holds(it.it)
	it.plain = c.minTime >= it.s.mint && c.maxTime <= it.s.maxt && it.s.hidden == nil && len(it.s.deleted) == 0
	it.skip, it.seekTo = c.minTime < it.s.mint && it.s.hidden == nil && len(it.s.deleted) == 0, it.s.mint
	if h := it.s.hidden; h != nil {
		it.idx = h.first[ci] - 1 // incremented before the first sample
	}
	return true
}

// Next advances to the next visible sample; the head holds only floats.
func (it *headIterator) Next() chunks.ValueType {
	if it.peeked {
		it.peeked = false
		return it.vt
	}
	if it.done {
		return chunks.ValNone
	}
	if it.plain && it.inSpace {
		// An XOR chunk, the most common case, called directly.
		if t, v, ok := it.space.NextFloat(); ok {
			it.idx++
			it.t, it.v = t, v
			it.vt, it.valid = chunks.ValFloat, true
			return chunks.ValFloat
		}
	} else if it.plain {
		// Floats, the common case, without the call to read.
		switch vt := it.it.Next(); vt {
		case chunks.ValFloat:
			it.idx++
			it.t, it.v = it.it.At()
			it.vt, it.valid = vt, true
			return vt
		case chunks.ValNone:
		default:
			it.read(vt)
			it.valid = true
			return vt
		}
	}
	for it.nextRaw() {
		if it.t > it.s.maxt {
			break
		}
		if it.t < it.s.mint || it.hidden() || it.s.deleted.Contains(it.t) {
			continue
		}
		it.valid = true
		return it.vt
	}
	it.done, it.valid = true, false
	return chunks.ValNone
}

// NextFloat implements chunks.FloatNexter: Next, and At if the sample is
// a float.
func (it *headIterator) NextFloat() (chunks.ValueType, int64, float64) {
	vt := it.Next()
	return vt, it.t, it.v
}

// NextFloats implements chunks.FloatBatcher: it passes on samples of an
// XOR chunk the read sees whole (plain) and that ends at or before maxt,
// so every sample left in it qualifies; it stops at the chunk's end.
func (it *headIterator) NextFloats(ts []int64, vs []float64, maxt int64) int {
	if !it.valid || it.peeked || !it.plain || !it.inSpace || it.s.chunks[it.ci].maxTime > maxt {
		return 0
	}
	n := it.space.NextFloats(ts, vs)
	if n > 0 {
		it.idx += uint64(n)
		it.t, it.v = ts[n-1], vs[n-1]
	}
	return n
}

// next is Next reporting whether there is a sample.
func (it *headIterator) next() bool { return it.Next() != chunks.ValNone }

// read takes the sample of type vt the chunk iterator moved to. A
// histogram stays in the chunk iterator until AtHistogram or
// AtFloatHistogram asks for it.
func (it *headIterator) read(vt chunks.ValueType) {
	it.idx++
	it.vt = vt
	if vt == chunks.ValFloat {
		it.t, it.v = it.it.At()
	} else {
		it.t = it.it.AtT()
	}
}

// hidden reports whether the current sample is invisible to the read.
func (it *headIterator) hidden() bool {
	h := it.s.hidden
	if h == nil {
		return false
	}
	inv := h.idx
	for it.inv < len(inv) && inv[it.inv] < it.idx {
		it.inv++
	}
	return it.inv < len(inv) && inv[it.inv] == it.idx
}

// seek is Seek reporting whether there is a sample.
func (it *headIterator) seek(t millis) bool {
	if it.done {
		return false
	}
	if it.valid && it.t >= t {
		it.peeked = false
		return true
	}
	it.peeked = false
	// Skip whole chunks that end before t.
	ci := max(it.ci, 0)
	for ci < len(it.s.chunks) && it.s.chunks[ci].maxTime < t {
		ci++
	}
	if ci != it.ci {
		if !it.nextChunk(ci) {
			it.done, it.valid = true, false
			return false
		}
		if it.s.hidden == nil && len(it.s.deleted) == 0 && it.s.chunks[ci].minTime < t {
			it.skip, it.seekTo, it.plain = true, max(t, it.s.mint), false
		}
	}
	for it.next() {
		if it.t >= t {
			return true
		}
	}
	return false
}

// Seek advances to the first sample at or after t; see chunks.Iterator.
func (it *headIterator) Seek(t millis) chunks.ValueType {
	if it.seek(t) {
		return it.vt
	}
	return chunks.ValNone
}

// At returns the current float sample; it panics on a histogram sample.
func (it *headIterator) At() (int64, float64) {
	if it.vt != chunks.ValFloat {
		panic(wrongValueType("At", it.vt))
	}
	return it.t, it.v
}

func (it *headIterator) AtT() int64 { return it.t }
func (it *headIterator) AtST() int64 {
	if it.inSpace {
		return 0
	}
	return it.it.AtST()
}
func (it *headIterator) Err() error { return it.err }

// AtHistogram returns the current integer histogram sample; it panics on
// any other sample.
func (it *headIterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	if it.vt != chunks.ValHistogram {
		panic(wrongValueType("AtHistogram", it.vt))
	}
	t, h := it.it.AtHistogram(h)
	runtime.KeepAlive(it) // its series keeps a mapped chunk mapped (head_mmap.go)
	return t, h
}

// AtFloatHistogram returns the current histogram sample as a float
// histogram; it panics on a float sample.
func (it *headIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	if it.vt != chunks.ValHistogram && it.vt != chunks.ValFloatHistogram {
		panic(wrongValueType("AtFloatHistogram", it.vt))
	}
	t, fh := it.it.AtFloatHistogram(fh)
	runtime.KeepAlive(it) // its series keeps a mapped chunk mapped (head_mmap.go)
	return t, fh
}
