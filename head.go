package tsdb

import (
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/headchunks"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/internal/metricnames"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
)

// MinSampleTime and MaxSampleTime bound the timestamps the DB stores, in
// milliseconds: ±2^62, some 146 million years either side of 1970. Append
// rejects samples outside with ErrOutOfBounds. The margin to the int64
// limits keeps the time arithmetic of blocks (range ends, the head's span,
// a block's end plus one) free of overflow, and leaves math.MinInt64 to
// mark a series without samples.
const (
	MinSampleTime int64 = -1 << 62
	MaxSampleTime int64 = 1<<62 - 1
)

// SeriesRef identifies a series in the head for the lifetime of the process.
// Appender.Append returns it so that later appends can skip the label lookup.
type SeriesRef uint64

// head is the in-memory block that takes all writes. It is safe for
// concurrent use.
//
// Locks: each memSeries has its own mutex; each stripe of the series map has
// an RWMutex; the isolation state, the postings, the ref table and the
// fields below have one each. Their order, with the DB's, is the rank order
// of internal/lockorder (written out in doc.go and README.md): the head's
// part is closeMu, tombsMu, stripe, MemPostings.mu, series, rangeMu,
// isolation.mu, refTable.mu. The edges that make it: a Commit holds
// closeMu (read side) while it logs to the WAL and takes the isolation,
// series and range locks in turn; a stripe lock is held while a new
// series gets its ref from the postings (MemPostings.mu) and while a
// series is removed (its series lock); tombsMu is held while the ref
// table is read (refTable.mu for refs beyond the pages). No two locks of
// one class are ever held at once.
type head struct {
	logger *slog.Logger

	chunkRange      int64 // ms; the block range, also bounds the appendable window
	samplesPerChunk int
	isolationOn     bool

	iso       *isolation
	series    *stripeSeries
	exemplars *exemplarStorage // never nil; an empty ring while exemplars are off
	postings  *index.MemPostings
	// order ranks series by labels for Select's sort; orderc asks the
	// DB's order loop to rebuild it (head_order.go).
	order   atomic.Pointer[seriesOrder]
	orderc  chan struct{}
	metrics *headMetrics

	lastSeriesRef atomic.Uint64
	// walDups maps the refs of duplicate Series records the WAL replay
	// found (another ref for the labels of a series an earlier record
	// defined) to the series' ref: their samples are that series', so
	// checkpoints keep them while it lives (wal_checkpoint.go). Set by
	// Open before the DB is shared; read and pruned by checkpoints, which
	// hold cmtx.
	walDups map[uint64]uint64
	// walMark is the greatest WAL mark of the blocks at Open (wal_mark.go),
	// nil without one: WAL replay drops the samples it says the blocks
	// hold. Set by Open before the replay; not used after it.
	walMark   *WALMark
	numSeries atomic.Int64

	// Time range of the committed samples: minTime is math.MaxInt64 and
	// maxTime math.MinInt64 while the head is empty.
	minTime, maxTime atomic.Int64
	// minValidTime: samples before it are rejected as out of bounds (it is
	// raised when the head is truncated after its data went into a block).
	minValidTime atomic.Int64
	// maxFutureSkew (ms; 0: off): Append rejects samples later than the
	// wall clock plus this with ErrTooFarInFuture.
	maxFutureSkew int64
	// lateWindow (ms; 0: off) is Options.OutOfOrderTimeWindow, changed at
	// run time by DB.SetOutOfOrderTimeWindow; see head_late.go.
	lateWindow atomic.Int64

	// truncGen is odd while truncate recomputes minTime and maxTime from
	// the remaining chunks; commits then also fold their range into
	// truncMin and truncMax, which rangeMu protects. rangeMu is taken
	// after (never while holding) a series lock.
	truncGen           atomic.Uint64
	rangeMu            lockorder.Mutex[lockorder.HeadRange]
	truncMin, truncMax int64

	// wal is the write-ahead log; nil when the DB runs without one.
	// sampleBufs pools the batches of Appenders (*appendBatch) with their
	// sample buffers, so that a scrape-sized commit does not regrow one
	// every time.
	sampleBufs sync.Pool
	// walScratch pools the encoding buffers of commits (see wal.go).
	wal        *wlog.WL
	walScratch sync.Pool
	// wbl is the log of late samples for Prometheus (wbl.go); nil without
	// one. Set before the DB is used, or (a window turned on at run time)
	// once, under DB.mu, before any appender can have late samples.
	wbl atomic.Pointer[wblLog]
	// headChunks writes the closed chunks to chunks_head/ (head_mmap.go);
	// nil without a WAL and in a read-only DB. Set by Open before the DB
	// is used; used under cmtx. mapFailed is set when writing them
	// failed: closed chunks then stay in the heap.
	headChunks *headchunks.Writer
	mapFailed  atomic.Bool
	// mapped are the chunks the head chunk files held at Open, for the
	// WAL replay (head_mmap.go); nil otherwise.
	mapped *mappedReplay
	// mapScratch is mapChunks' batch, kept between runs (under cmtx).
	mapScratch []mapEntry

	// tombs are the deletion intervals (delete.go); tombsMu serializes
	// their replacement.
	tombs   atomic.Pointer[headTombstones]
	tombsMu lockorder.Mutex[lockorder.HeadTombstones]

	// closeMu orders commits against close: Commit holds the read side
	// from its check of closed until its samples are applied and logged;
	// close takes the write side to set closed, so once close returns no
	// commit is in flight and none will touch the WAL or the head again.
	// Delete takes the write side too, to read the head between commits
	// (deletions).
	// Append reads closed without the lock (a hint: Commit checks again).
	closeMu lockorder.RWMutex[lockorder.HeadClose]
	closed  atomic.Bool

	// trackLeakedAppenders: Appenders record where they were created, for
	// the warning logged when a leaked one is released.
	trackLeakedAppenders bool

	// onCommit, if set (by the DB, before use), is called after each
	// commit: it wakes compaction when the head is due.
	onCommit func()

	// commitHook, if set (by tests only, before the head is used), is called
	// by Commit while its write ID is in flight, before it applies the i-th
	// sample of the transaction.
	commitHook func(a *headAppender, i int)

	// deleteHook, if set (by tests only, before the head is used), is
	// called by deletions after it looked the matching series up.
	deleteHook func()

	// loggedHook, if set (by tests only, before the head is used), is
	// called by Commit after it wrote its WAL records, before it applies
	// them.
	loggedHook func(a *headAppender)
}

// headOptions are the parts of Options the head uses.
type headOptions struct {
	chunkRange        int64
	samplesPerChunk   int
	stripeSize        int
	isolationDisabled bool
	maxFutureSkew     int64 // ms; 0: off
	lateWindow        int64 // ms; 0: off
	maxExemplars      int64 // Options.MaxExemplars
	trackLeaks        bool  // Options.TrackLeakedAppenders
	metricNames       metricnames.Namer
}

func newHead(logger *slog.Logger, reg prometheus.Registerer, o headOptions) *head {
	h := &head{
		logger:               logger,
		chunkRange:           o.chunkRange,
		samplesPerChunk:      o.samplesPerChunk,
		isolationOn:          !o.isolationDisabled,
		maxFutureSkew:        o.maxFutureSkew,
		trackLeakedAppenders: o.trackLeaks,
		iso:                  newIsolation(),
		series:               newStripeSeries(o.stripeSize),
		postings:             index.NewMemPostings(),
		orderc:               make(chan struct{}, 1),
	}
	h.minTime.Store(math.MaxInt64)
	h.maxTime.Store(math.MinInt64)
	h.minValidTime.Store(math.MinInt64)
	h.lateWindow.Store(o.lateWindow)
	h.metrics = newHeadMetrics(h, reg, o.metricNames)
	h.exemplars = newExemplarStorage(o.maxExemplars, newExemplarMetrics(h, reg, o.metricNames))
	return h
}

// close makes every later Commit, Append and Rollback fail with ErrClosed.
// It waits for the commits in flight, so that the caller may close the WAL
// when it returns.
func (h *head) close() {
	h.closeMu.Lock()
	h.closed.Store(true)
	h.closeMu.Unlock()
}

// NumSeries returns the number of series in the head.
func (h *head) NumSeries() int64 { return h.numSeries.Load() }

// MinTime returns the time of the oldest committed sample, math.MaxInt64 if
// there is none.
func (h *head) MinTime() int64 { return h.minTime.Load() }

// MaxTime returns the time of the newest committed sample, math.MinInt64 if
// there is none.
func (h *head) MaxTime() int64 { return h.maxTime.Load() }

// appendableMinValidTime returns the oldest timestamp the head accepts now:
// samples must not be older than half a block range before the newest
// sample, nor older than data already moved to blocks. The comparison
// (rather than a subtraction) keeps a newest sample within half a block
// range of math.MinInt64 from wrapping the bound around to the top; it
// also covers the empty head (maxTime math.MinInt64).
//
// The window follows the newest sample, whatever its time: once a sample
// far in the future is committed (a client sending microseconds instead of
// milliseconds, say), every sample at the current time is out of bounds
// until that sample has left the head, which takes until the wall clock
// reaches it. Options.MaxFutureSkew rejects such samples at Append so that
// they never get in.
func (h *head) appendableMinValidTime() int64 {
	mv := h.minValidTime.Load()
	if maxt := h.maxTime.Load(); maxt >= math.MinInt64+h.chunkRange/2 {
		mv = max(mv, maxt-h.chunkRange/2)
	}
	return mv
}

// appendableMaxValidTime returns the newest timestamp the head accepts now:
// the wall clock plus MaxFutureSkew, or math.MaxInt64 without it.
func (h *head) appendableMaxValidTime() int64 {
	if h.maxFutureSkew <= 0 {
		return math.MaxInt64
	}
	now := time.Now().UnixMilli()
	if now > math.MaxInt64-h.maxFutureSkew {
		return math.MaxInt64
	}
	return now + h.maxFutureSkew
}

// updateTimeRange widens the head's time range to include [mint, maxt],
// the times of samples just applied to the head.
//
// While truncate recomputes the range (truncGen odd) it also records the
// range in truncMin and truncMax under rangeMu, so that truncate's result
// includes every sample applied concurrently with its scan (see truncate).
// Outside a truncation the cost is one atomic load.
func (h *head) updateTimeRange(mint, maxt int64) {
	if h.truncGen.Load()&1 == 1 {
		h.rangeMu.Lock()
		defer h.rangeMu.Unlock()
		h.truncMin, h.truncMax = min(h.truncMin, mint), max(h.truncMax, maxt)
	}
	atomicMin(&h.minTime, mint)
	atomicMax(&h.maxTime, maxt)
}

// getOrCreate returns the series with the given labels, creating it if
// needed. The labels are validated only when the series is new, and a new
// series keeps a copy of them, never lset itself. A label
// with an empty value is no label (as in Prometheus): {a="", b="1"} is the
// series {b="1"}. Takes a stripe lock, and MemPostings.mu under it for a
// new series (see stripeSeries.getOrSet), then refTable.mu alone; the
// caller holds no head lock.
func (h *head) getOrCreate(lset labels.Labels) (*memSeries, error) {
	lset = lset.WithoutEmpty()
	hash := lset.Hash()
	if s := h.series.getByHash(hash, lset); s != nil {
		return s, nil
	}
	if err := validateLabels(lset); err != nil {
		h.metrics.invalid.Inc()
		return nil, err
	}
	// The ref is taken and indexed in one step, so refs reach the postings
	// lists in order. Until getOrSet publishes the series, a reader may
	// find its ref in the postings without a series; reads skip such refs.
	s, created := h.series.getOrSet(hash, lset, func() *memSeries {
		// The caller's set may alias memory it reuses after the call
		// (labels.FromEncoding): the series and the postings keep a copy.
		own := lset.Clone()
		ref := h.postings.AddNext(own, func() uint64 { return h.lastSeriesRef.Add(1) })
		return newMemSeries(SeriesRef(ref), own)
	})
	if created {
		h.numSeries.Add(1)
		h.metrics.seriesCreated.Inc()
	}
	return s, nil
}

// validateLabels checks a label set for a new series.
func validateLabels(lset labels.Labels) error {
	if lset.IsEmpty() {
		return fmt.Errorf("%w: empty label set", ErrInvalidSample)
	}
	if name, dup := lset.HasDuplicateNames(); dup {
		return fmt.Errorf("%w: duplicate label name %q in %s", ErrInvalidSample, name, lset)
	}
	return lset.Validate(func(l labels.Label) error {
		switch {
		case l.Name == "":
			return fmt.Errorf("%w: empty label name in %s", ErrInvalidSample, lset)
		case !utf8.ValidString(l.Name):
			return fmt.Errorf("%w: label name %q is not valid UTF-8", ErrInvalidSample, l.Name)
		case !utf8.ValidString(l.Value):
			return fmt.Errorf("%w: value %q of label %q is not valid UTF-8", ErrInvalidSample, l.Value, l.Name)
		}
		return nil
	})
}

// memSeries is one series in the head: its chunks, the state needed to
// append to them and its write-ID ring.
type memSeries struct {
	ref  SeriesRef
	lset labels.Labels

	mu lockorder.Mutex[lockorder.Series] // protects every field below

	// chunks in time order. All but the last are closed: their contents
	// never change, so readers may keep the chunks after dropping the
	// lock; an element may still be swapped, under mu, for a copy of its
	// chunk in a head chunk file (head_mmap.go), so nothing reads the
	// slice itself without mu. The last one is open: readers copy it
	// under mu. Truncation moves the chunks it keeps to the front, in place.
	chunks []memChunk
	app    *chunks.XORAppender // appends to the open chunk if it is XOR; nil otherwise
	nextAt int64               // the open chunk is closed at this time
	// x is the state of histogram appends, start times and late samples,
	// allocated with the series' first such sample so that plain float
	// series do not pay for it.
	x *seriesExtra

	total uint64 // samples ever appended; index of the next sample

	txs writeIDRing // write IDs of the newest samples (isolation.go)

	// pendingApp and pendingIdx point at the newest sample an Appender has
	// buffered but not committed for this series, so that the Appender can
	// reject its own out-of-order samples at Append time. Cleared when that
	// Appender commits or rolls back, or is released as leaked. It points
	// at the Appender's batch, never at the Appender itself, so that the
	// head does not keep a leaked Appender reachable.
	pendingApp *appendBatch
	pendingIdx int32
	// pending counts the samples of this series buffered by open
	// Appenders: a series with pending samples is never removed.
	pending int32
	// removed is set when truncation took the series out of the head; an
	// Appender that finds it so looks the labels up again.
	removed bool

	// walLogged is set once a Series record of the series is in the WAL.
	walLogged atomic.Bool
}

// memChunk is one chunk of a head series with its time range: an XOR
// chunk, or a histogram or float-histogram chunk.
type memChunk struct {
	chunk            chunks.Chunk
	minTime, maxTime int64
}

func newMemSeries(ref SeriesRef, lset labels.Labels) *memSeries {
	return &memSeries{ref: ref, lset: lset, nextAt: math.MinInt64}
}

// lastTLocked returns the time of the newest sample, the end of the open
// chunk; math.MinInt64 if the series has no chunk. Samples truncated away
// do not count: truncation removes whole chunks before the head's new
// minimum valid time, so every later sample is after them anyway. (Kept
// out of memSeries as a field so that memSeries stays 128 bytes, two cache
// lines: at 136 bytes, WAL replay measured 20% slower.) Requires s.mu held.
func (s *memSeries) lastTLocked() int64 {
	if n := len(s.chunks); n > 0 {
		return s.chunks[n-1].maxTime
	}
	return math.MinInt64
}

// appendableLocked checks whether p can follow the series' newest sample
// and the newest sample pending in app. It returns errNoop for a re-append
// of the newest sample with an identical value (the same float bits, or an
// equal histogram of the same kind). Requires s.mu held.
func (s *memSeries) appendableLocked(app *appendBatch, p *pendingSample) error {
	if s.pendingApp == app {
		q := &app.samples[s.pendingIdx]
		switch {
		case p.t > q.t:
			return nil
		case p.t < q.t:
			return ErrOutOfOrderSample
		}
		return sameTimeOrder(p, q)
	}
	lastT := s.lastTLocked()
	if p.t > lastT {
		return nil
	}
	if p.t < lastT {
		return ErrOutOfOrderSample
	}
	return sameTimeOrder(p, s.lastSample())
}

// lastSample returns the newest sample as a pendingSample (its series field
// unset). Requires s.mu held.
func (s *memSeries) lastSample() *pendingSample {
	last := &pendingSample{t: s.lastTLocked()}
	switch {
	case s.x != nil && (s.x.lastH != nil || s.x.lastFH != nil):
		last.h, last.fh = s.x.lastH, s.x.lastFH
	case s.x != nil && s.x.xor2 != nil:
		last.v = math.Float64frombits(s.x.xor2Last)
	case s.app == nil:
		// No open chunk: the newest sample was truncated away, and
		// anything at its time is out of bounds anyway.
		last.v = math.NaN()
	default:
		last.v = math.Float64frombits(s.app.LastValueBits())
	}
	return last
}

// sameTimeOrder tells whether p can follow q, a sample at the same time:
// errNoop if it is the same sample (the same float bits, or an equal
// histogram of the same kind), else ErrDuplicateSampleForTimestamp. A
// float and a histogram at one time are duplicates, as in Prometheus.
func sameTimeOrder(p, q *pendingSample) error {
	switch {
	case p.h != nil && q.h != nil && p.h.Equals(q.h),
		p.fh != nil && q.fh != nil && p.fh.Equals(q.fh),
		p.h == nil && p.fh == nil && q.h == nil && q.fh == nil && math.Float64bits(p.v) == math.Float64bits(q.v):
		return errNoop
	}
	return ErrDuplicateSampleForTimestamp
}

// appendLocked adds a committed sample to the series. id is the commit's
// write ID and lowWatermark the watermark it saw; both are ignored when
// isolation is off. It returns the reason the sample was dropped, "" if it
// was appended: a sample is dropped here only if another commit wrote a
// newer or conflicting sample to the series after this one was buffered.
// Requires s.mu held; takes no lock.
func (s *memSeries) appendLocked(h *head, t int64, v float64, id, lowWatermark uint64) (reason string) {
	if t <= s.lastTLocked() {
		return s.appendedBeforeLocked(&pendingSample{t: t, v: v})
	}
	if s.app == nil || t >= s.nextAt || s.app.NumSamples() >= h.samplesPerChunk {
		if hh, fh := s.staleHistogramLocked(v); hh != nil || fh != nil {
			return s.appendHistogramLocked(h, 0, t, hh, fh, id, lowWatermark)
		}
		s.cutChunkLocked(h, t)
		if s.x != nil {
			s.x.lastH, s.x.lastFH = nil, nil
		}
	}
	// Past the cut, s.x is not touched (see xorOpenInvariant): a late
	// series' seriesExtra would cost a cache miss on every sample.
	s.app.Append(t, v)
	s.appendedLocked(h, t, id, lowWatermark)
	return ""
}

// appendedBeforeLocked returns why p, a committed sample no later than the
// series' newest, cannot be appended: "" if it is the newest sample again
// (nothing to do, nothing lost), else the reason it is dropped. Requires
// s.mu held.
func (s *memSeries) appendedBeforeLocked(p *pendingSample) (reason string) {
	if p.t < s.lastTLocked() {
		return reasonOutOfOrder
	}
	if sameTimeOrder(p, s.lastSample()) == errNoop {
		return ""
	}
	return reasonDuplicate
}

// appendedLocked records a sample at t, just written to the open chunk:
// the chunk's range, the series' newest time and sample count, and the
// commit's write ID. Requires s.mu held.
func (s *memSeries) appendedLocked(h *head, t int64, id, lowWatermark uint64) {
	s.chunks[len(s.chunks)-1].maxTime = t
	s.total++
	if h.isolationOn && !s.txs.tryPushInline(id, lowWatermark) {
		s.txs.pushSlow(id, lowWatermark)
	}
}

// cutChunkLocked closes the open chunk and opens a new one starting at t.
// Chunks never straddle a block-range boundary, so that cutting blocks
// from the head never splits a chunk. Requires s.mu held.
func (s *memSeries) cutChunkLocked(h *head, t int64) {
	c := chunks.NewXORChunk()
	app, err := c.XORAppender()
	if err != nil {
		// A new, empty XOR chunk always has an appender.
		panic(fmt.Sprintf("tsdb: appender of new chunk: %v", err))
	}
	s.openChunkLocked(h, c, t)
	s.app = app
	s.nextAt = rangeEnd(t, h.chunkRange)
}

// openChunkLocked closes the open chunk, if any, and makes c, which starts
// at t, the open chunk; every appender is then stale, and the caller sets
// the one for c. Requires s.mu held.
func (s *memSeries) openChunkLocked(h *head, c chunks.Chunk, t int64) {
	if n := len(s.chunks); n > 0 {
		s.chunks[n-1].chunk.Compact()
	}
	s.chunks = append(s.chunks, memChunk{chunk: c, minTime: t, maxTime: t})
	h.metrics.chunks.Inc()
	s.app = nil
	if s.x != nil {
		s.x.xor2, s.x.happ, s.x.fapp = nil, nil, nil
	}
}
