package tsdb

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/isotsdb/tsdb/internal/lockorder"
)

// This file holds every isolation rule of the database; no other file
// decides whether a sample is visible.
//
// Write IDs. Every commit that applies at least one sample or metadata
// update takes a write ID from a counter that starts at 1 when the DB
// opens, under the WAL's lock just before it writes its WAL records, and
// releases it when it has applied them all (a commit whose WAL write fails
// releases it having applied nothing). Appenders that are idle, slow or leaked hold
// nothing; Rollback and empty commits (an unchanged metadata update buffers
// nothing) take no ID. Samples replayed from the WAL or read from blocks carry
// ID 0, which every read sees.
//
// Read snapshots. A read takes a snapshot of the commits that had completed:
// the highest ID handed out (maxWriteID) and the IDs still in flight at that
// moment. A sample with ID id is visible to the snapshot iff
//
//	id == 0 || (id <= maxWriteID && id not in flight at the snapshot)
//
// so a read never sees part of a commit, nor any commit that started after
// it. Taking a snapshot costs O(commits in flight): a handful, whatever the
// number of open Appenders.
//
// Low watermark. Each snapshot records its low mark: its lowest in-flight ID,
// else maxWriteID+1. Every ID below the low mark is visible to it. Low marks
// never decrease in snapshot order, so the low watermark of the whole DB is
// the oldest open read's low mark, else the lowest ID in flight, else the next
// ID to hand out: O(1). Every ID below the low watermark is visible to every
// open read and every future read, so no one needs to know it any more.
//
// Per-series rings. Each head series keeps a writeIDRing with the write IDs of
// its newest samples, one per sample in append order. A commit appends its ID
// for each sample it adds and drops IDs below the low watermark from the
// front. Samples older than the ring's window are visible to everyone. Two
// commits in flight may write the same series in either order, so a visible
// sample can follow an invisible one; readers therefore check visibility per
// sample inside the window (see invisibleSamples).
//
// Late samples (head_late.go) go into the past of their series, not at its
// end, so they take no slot in the ring: each keeps its commit's write ID
// with it, in the series' open late buffer and then, one ID per sample in
// chunk order, with the late chunk it is encoded into. A read applies the
// same visibility rule to each (lateVisible), so it sees a commit's late
// and in-order samples together or not at all. A late chunk forgets its IDs
// once all of them are below the low watermark (settledIDs): its samples
// are then visible to every read, like samples before a ring's window.
//
// Exemplars (exemplar.go) keep their commit's write ID, one per exemplar,
// for as long as the exemplar ring holds them, and a read applies the
// same visibility rule to each (exemplarVisible): it sees a commit's
// exemplars together with its samples, or none of them. Since those IDs
// are never forgotten, an exemplar read does not need the low watermark
// to wait for it: it takes a detached snapshot (detachedSnapshot), which
// records the commits completed like any other but is not listed among
// the open reads, holds nothing back and needs no release. A detached
// snapshot must never be used to read samples, whose IDs the rings drop
// below the low watermark.
//
// Late samples and blocks. A block holds no write IDs: every read that
// includes it sees all of it. So a head compaction writes its blocks from
// a read snapshot taken after it froze the late samples it will drop
// (freezeLate) and waited for every commit in flight at that moment: the
// frozen samples are then all visible to the snapshot, and the blocks hold
// whole commits only. Late samples of commits that complete after the
// snapshot stay in the head, unfrozen, for a later compaction. A querier
// created after the blocks are published reads them and may also read,
// from the head, the samples they copied (until the truncation drops
// them); the merge keeps one of two samples at the same time, and both are
// the same sample. A querier created before reads the head only, and the
// truncation waits for it.
//
// Commits and WAL checkpoints. Because the ID is taken under the WAL's lock
// before the records are written, every commit whose records are in a WAL
// segment holds an ID no higher than the high watermark read after the
// segment was closed. The checkpoint waits for those commits before it looks at which
// series hold late samples (wal_checkpoint.go). Otherwise a commit logged
// before a head compaction and applied after it could put a sample behind
// the new block range, as a late one, while the checkpoint of its segment
// dropped it as a copy of what the block holds.
//
// Commits and WAL marks. For the same reason, a head compaction that
// reads the WAL's position P (its blocks' WAL mark, wal_mark.go) after it
// raised minValidTime, then waits for the commits up to the high
// watermark read after P, has every commit whose records lie before P
// applied before it freezes the late samples: their samples before the
// range's end are all in its blocks. A commit whose records lie after P
// took its ID after P was read, and loads minValidTime after that
// (Commit), so it sees the raised bound: its samples before the range's
// end are late ones, or rejected.
//
// Deletes and commits. A Delete's head intervals are time ranges, not
// write IDs, so it must not read the head while a commit is half applied:
// a commit that had reached some of the matching series (whose intervals
// would then cover its samples) and not others, or that created a
// matching series after the Delete looked them up, would come out deleted
// in part. So the Delete looks the series up and reads each one's newest
// sample holding head.closeMu's write side (head.deletions), which waits
// for the commits in flight and holds new ones back. Each series'
// interval ends at its own newest sample: every commit applied before
// is covered whole (in the range), and the in-order samples of every
// commit applied after lie beyond it. Late samples committed afterwards
// into a deleted range are deleted, as in a block, in every series the
// Delete matched.
//
// Listing the head's series (DB.HeadSeries, head_series.go) is a read
// like a Querier's: one snapshot, taken when it starts and held until it
// returns, and for each series the newest sample visible to it. That is
// the series' newest sample if the last ID of its ring is visible
// (newestVisible): in-order samples are appended in time order, so the
// newest in-order sample has the ring's last ID. Otherwise (and when
// the newest sample is a late one, which takes no ring slot) the series
// is read through a capture, as a Querier reads it. The series' metadata
// is listed as the same snapshot sees it (visibleMetadata, below).
//
// Metadata (head_metadata.go). A commit sets a series' metadata under its
// write ID, as it appends samples. The series keeps its versions in the
// order commits applied them, each with its commit's ID; a read sees the
// newest version whose ID it sees (visibleMetadata), so it sees a commit's
// metadata exactly when it sees the commit's samples, and a read that
// started before the commit keeps seeing the version before it. Versions
// before the newest one whose ID is below the low watermark are visible to
// no read any more (every read sees that one, or a newer one): the commit
// that adds a version drops them (trimMetaVersions). The adding commit's
// own ID is in flight, so never below the watermark it sees: in steady
// state a series holds its newest version and the one before it. With
// isolation off, commits set metadata with ID 0, visible at once, and a
// series holds one version. Replayed metadata has ID 0 and replaces every
// version.

// inflightWrite is one commit in flight. It is embedded in the appender so
// that beginning a commit allocates nothing.
type inflightWrite struct {
	id         uint64
	prev, next *inflightWrite
}

// readSnapshot is what one open read may see. Its fields are immutable after
// creation except for the list links and closed, which isolation.mu guards.
type readSnapshot struct {
	maxWriteID uint64
	inflight   []uint64 // IDs in flight when taken, ascending
	lowMark    uint64   // lowest ID in inflight, else maxWriteID+1

	seq        uint64 // creation order among all reads
	iso        *isolation
	prev, next *readSnapshot // guarded by iso.mu
	closed     bool          // guarded by iso.mu
}

// visible reports whether a sample written with write ID id is visible to
// the snapshot. A nil snapshot (isolation disabled) sees everything.
func (s *readSnapshot) visible(id uint64) bool {
	if s == nil || id < s.lowMark {
		return true
	}
	if id > s.maxWriteID {
		return false
	}
	// lowMark <= id <= maxWriteID: invisible only if it was in flight.
	if len(s.inflight) <= 8 {
		for _, w := range s.inflight {
			if w == id {
				return false
			}
		}
		return true
	}
	_, found := slices.BinarySearch(s.inflight, id)
	return !found
}

// release ends the read. It is idempotent and safe for concurrent use, and
// may be called from a cleanup function after the reader became unreachable.
func (s *readSnapshot) release() {
	if s == nil {
		return
	}
	s.iso.mu.Lock()
	defer s.iso.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	iso := s.iso
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		iso.readsHead = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		iso.readsTail = s.prev
	}
	s.prev, s.next = nil, nil
	iso.openReads--
}

// isolation hands out write IDs and read snapshots and knows the low
// watermark. It is safe for concurrent use. Lock order: mu comes after the
// DB's lock (Querier takes a snapshot under it), a querier's (Close
// releases the snapshot under it) and closeMu (Commit); it is only ever
// held for a few instructions and nothing is locked under it.
type isolation struct {
	mu lockorder.Mutex[lockorder.Isolation] // protects every field below

	lastID uint64 // highest write ID handed out; 0 before the first commit

	// Commits in flight, a doubly linked list in ID order: IDs are handed
	// out in increasing order and appended at the tail; any may leave.
	writesHead, writesTail *inflightWrite
	inflight               int

	// Open reads, a doubly linked list in creation order (and therefore in
	// non-decreasing lowMark order).
	readsHead, readsTail *readSnapshot
	openReads            int
	readSeq              uint64 // seq of the next read snapshot
}

func newIsolation() *isolation {
	return &isolation{}
}

// lowWatermark returns the lowest write ID any open or future read may be
// unable to see. Every ID below it is visible to all reads.
func (iso *isolation) lowWatermark() uint64 {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	return iso.lowWatermarkLocked()
}

// lowWatermarkLocked is lowWatermark; requires iso.mu held.
func (iso *isolation) lowWatermarkLocked() uint64 {
	if iso.readsHead != nil {
		return iso.readsHead.lowMark
	}
	if iso.writesHead != nil {
		return iso.writesHead.id
	}
	return iso.lastID + 1
}

// highWatermark returns the highest write ID handed out so far.
func (iso *isolation) highWatermark() uint64 {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	return iso.lastID
}

// stats returns the number of open reads and of commits in flight.
func (iso *isolation) stats() (openReads, inflight int) {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	return iso.openReads, iso.inflight
}

// beginCommit gives w the next write ID and marks it in flight. It returns
// the low watermark as of that moment, which the commit uses to trim the
// rings of the series it writes (the watermark only ever rises, so an older
// value is always safe to use).
func (iso *isolation) beginCommit(w *inflightWrite) (lowWatermark uint64) {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	iso.lastID++
	w.id = iso.lastID
	w.prev, w.next = iso.writesTail, nil
	if iso.writesTail != nil {
		iso.writesTail.next = w
	} else {
		iso.writesHead = w
	}
	iso.writesTail = w
	iso.inflight++
	return iso.lowWatermarkLocked()
}

// endCommit marks w's commit as complete: from now on new snapshots see it.
func (iso *isolation) endCommit(w *inflightWrite) {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		iso.writesHead = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		iso.writesTail = w.prev
	}
	w.prev, w.next = nil, nil
	iso.inflight--
}

// snapshot opens a read: it records which commits have completed. The
// caller must release it. Cost: O(commits in flight).
func (iso *isolation) snapshot() *readSnapshot {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	s := &readSnapshot{maxWriteID: iso.lastID, lowMark: iso.lastID + 1, iso: iso, seq: iso.readSeq}
	iso.readSeq++
	if iso.inflight > 0 {
		s.inflight = make([]uint64, 0, iso.inflight)
		for w := iso.writesHead; w != nil; w = w.next {
			s.inflight = append(s.inflight, w.id)
		}
		s.lowMark = s.inflight[0]
	}
	s.prev = iso.readsTail
	if iso.readsTail != nil {
		iso.readsTail.next = s
	} else {
		iso.readsHead = s
	}
	iso.readsTail = s
	iso.openReads++
	return s
}

// detachedSnapshot returns a snapshot of the commits completed, like
// snapshot, that is not an open read: it does not hold back the low
// watermark and is never released. Only data whose write IDs are kept
// forever (exemplars) may be read through it. Cost: O(commits in flight).
func (iso *isolation) detachedSnapshot() *readSnapshot {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	// closed: release (which nothing should call) finds nothing to do.
	s := &readSnapshot{maxWriteID: iso.lastID, lowMark: iso.lastID + 1, iso: iso, closed: true}
	if iso.inflight > 0 {
		s.inflight = make([]uint64, 0, iso.inflight)
		for w := iso.writesHead; w != nil; w = w.next {
			s.inflight = append(s.inflight, w.id)
		}
		s.lowMark = s.inflight[0]
	}
	return s
}

// exemplarVisible reports whether snap (nil: isolation off) sees an
// exemplar stored with write ID id.
func exemplarVisible(snap *readSnapshot, id uint64) bool {
	return snap.visible(id)
}

// nextReadSeq returns the sequence number the next read snapshot will get:
// every read open now has a lower one.
func (iso *isolation) nextReadSeq() uint64 {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	return iso.readSeq
}

// checkInvariants checks the isolation state against the rules above and
// returns the first violation found, nil if none: the commits in flight
// are a well-linked list of IDs in [1, lastID], strictly increasing,
// inflight of them; the open reads are a well-linked list in strictly
// increasing seq below readSeq, openReads of them, none closed, with
// non-decreasing low marks, each snapshot consistent (maxWriteID <= lastID,
// its in-flight IDs ascending within [lowMark, maxWriteID], lowMark the
// lowest of them or maxWriteID+1). Safe for concurrent use.
func (iso *isolation) checkInvariants() error {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	n := 0
	var prev *inflightWrite
	for w := iso.writesHead; w != nil; w = w.next {
		switch {
		case w.prev != prev:
			return fmt.Errorf("isolation: commit %d: broken back link", w.id)
		case w.id == 0 || w.id > iso.lastID:
			return fmt.Errorf("isolation: commit in flight has write ID %d outside [1, %d]", w.id, iso.lastID)
		case prev != nil && w.id <= prev.id:
			return fmt.Errorf("isolation: commit %d follows commit %d in the in-flight list", w.id, prev.id)
		}
		prev = w
		if n++; n > iso.inflight {
			return fmt.Errorf("isolation: more commits listed than the %d counted in flight", iso.inflight)
		}
	}
	if prev != iso.writesTail {
		return fmt.Errorf("isolation: tail of the in-flight list is not its last element")
	}
	if n != iso.inflight {
		return fmt.Errorf("isolation: %d commits listed, %d counted in flight", n, iso.inflight)
	}
	n = 0
	var prevRead *readSnapshot
	for r := iso.readsHead; r != nil; r = r.next {
		if err := r.checkInvariants(iso); err != nil {
			return err
		}
		switch {
		case r.prev != prevRead:
			return fmt.Errorf("isolation: read %d: broken back link", r.seq)
		case prevRead != nil && r.seq <= prevRead.seq:
			return fmt.Errorf("isolation: read %d follows read %d in the open-read list", r.seq, prevRead.seq)
		case prevRead != nil && r.lowMark < prevRead.lowMark:
			return fmt.Errorf("isolation: read %d has low mark %d, below the %d of the older read %d", r.seq, r.lowMark, prevRead.lowMark, prevRead.seq)
		}
		prevRead = r
		if n++; n > iso.openReads {
			return fmt.Errorf("isolation: more reads listed than the %d counted open", iso.openReads)
		}
	}
	if prevRead != iso.readsTail {
		return fmt.Errorf("isolation: tail of the open-read list is not its last element")
	}
	if n != iso.openReads {
		return fmt.Errorf("isolation: %d reads listed, %d counted open", n, iso.openReads)
	}
	return nil
}

// checkInvariants checks one open read snapshot of iso; iso.mu is held.
func (s *readSnapshot) checkInvariants(iso *isolation) error {
	switch {
	case s.iso != iso:
		return fmt.Errorf("isolation: read %d belongs to another isolation state", s.seq)
	case s.closed:
		return fmt.Errorf("isolation: read %d is released but still listed", s.seq)
	case s.seq >= iso.readSeq:
		return fmt.Errorf("isolation: read %d, but the next read seq is %d", s.seq, iso.readSeq)
	case s.maxWriteID > iso.lastID:
		return fmt.Errorf("isolation: read %d saw write ID %d, above the %d handed out", s.seq, s.maxWriteID, iso.lastID)
	}
	want := s.maxWriteID + 1
	if len(s.inflight) > 0 {
		want = s.inflight[0]
	}
	if s.lowMark != want {
		return fmt.Errorf("isolation: read %d has low mark %d, want %d", s.seq, s.lowMark, want)
	}
	for i, id := range s.inflight {
		if id < s.lowMark || id > s.maxWriteID || (i > 0 && id <= s.inflight[i-1]) {
			return fmt.Errorf("isolation: read %d: in-flight IDs %v not ascending within [%d, %d]", s.seq, s.inflight, s.lowMark, s.maxWriteID)
		}
	}
	return nil
}

// waitPoll is how often the waits below check their condition. They run
// only in compaction, which can afford it.
const waitPoll = 5 * time.Millisecond

// waitForReadsBefore waits until every read snapshot with a sequence
// number below seq is released. The head uses it before dropping data that
// such reads may still need.
func (iso *isolation) waitForReadsBefore(ctx context.Context, seq uint64) error {
	return iso.waitFor(ctx, func() bool { return iso.readsHead == nil || iso.readsHead.seq >= seq })
}

// waitForCommitsBefore waits until every commit with a write ID up to id
// has completed.
func (iso *isolation) waitForCommitsBefore(ctx context.Context, id uint64) error {
	return iso.waitFor(ctx, func() bool { return iso.writesHead == nil || iso.writesHead.id > id })
}

// waitFor polls cond, called with mu held, until it holds or ctx is done.
func (iso *isolation) waitFor(ctx context.Context, cond func() bool) error {
	for {
		iso.mu.Lock()
		ok := cond()
		iso.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(waitPoll):
		}
	}
}

// writeIDRing holds the write IDs of a series' newest samples, oldest first,
// one per sample in append order: the i-th oldest ID belongs to the sample
// with index total-len+i in the series, where total is the number of
// samples the series has had appended. It is guarded by the owning series'
// lock.
//
// In steady state (no long reads) it holds exactly one ID, since push trims
// the IDs below the low watermark before it adds: that ID is kept inline,
// so the ring costs 16 bytes a series and no allocation. Only while reads
// older than the series' newest samples are open does it spill into an
// idRing, which it drops again once a push or trim leaves one ID.
type writeIDRing struct {
	one uint64  // the single ID + 1 while big is nil; 0 if the ring is empty
	big *idRing // the IDs while more than one is held; nil otherwise
}

// idRing is a ring buffer of IDs. Its capacity is a power of two (at least
// 2). It doubles when full and halves when at most a quarter full, so its
// memory follows the number of samples written since the low watermark, not
// the series' history.
type idRing struct {
	ids   []uint64
	first uint32 // index in ids of the oldest ID
	n     uint32 // number of IDs held
}

// minRingCap is the smallest capacity of a spilled ring.
const minRingCap = 2

// len returns the number of IDs held.
func (r *writeIDRing) len() int {
	if r.big != nil {
		return int(r.big.n)
	}
	if r.one != 0 {
		return 1
	}
	return 0
}

// cap returns the number of IDs the ring has room for without growing.
func (r *writeIDRing) cap() int {
	if r.big != nil {
		return len(r.big.ids)
	}
	return 1
}

// push records the write ID of a newly appended sample, first dropping IDs
// below lowWatermark from the front. A sample with ID 0 (replayed, visible
// to all) needs no entry while the ring is empty: the ring's window is the
// newest samples, and everything before the window is visible to all.
func (r *writeIDRing) push(id, lowWatermark uint64) {
	if !r.tryPushInline(id, lowWatermark) {
		r.pushSlow(id, lowWatermark)
	}
}

// tryPushInline is push's fast path, small enough for the compiler to
// inline into the append loop: the steady state, where the new ID replaces
// the one inline ID (or none). one <= lowWatermark says both: the ring is
// empty (one == 0) or its ID (one-1) is below the watermark. It reports
// whether it pushed; if not, call push.
func (r *writeIDRing) tryPushInline(id, lowWatermark uint64) bool {
	if r.big == nil && id != 0 && r.one <= lowWatermark {
		r.one = id + 1
		return true
	}
	return false
}

// pushSlow is push without the fast path, for a caller that has just
// tried tryPushInline.
func (r *writeIDRing) pushSlow(id, lowWatermark uint64) {
	r.trim(lowWatermark)
	switch {
	case r.big != nil:
		r.big.push(id)
	case r.one != 0:
		r.big = &idRing{ids: make([]uint64, minRingCap), n: 2}
		r.big.ids[0], r.big.ids[1] = r.one-1, id
		r.one = 0
	case id != 0:
		r.one = id + 1
	}
}

// trim drops IDs below lowWatermark from the front.
func (r *writeIDRing) trim(lowWatermark uint64) {
	if r.big == nil {
		if r.one != 0 && r.one-1 < lowWatermark {
			r.one = 0
		}
		return
	}
	r.big.trim(lowWatermark)
	switch r.big.n {
	case 0:
		r.big = nil
	case 1:
		r.one, r.big = r.big.at(0)+1, nil
	}
}

// at returns the i-th oldest ID held.
func (r *writeIDRing) at(i int) uint64 {
	if r.big != nil {
		return r.big.at(i)
	}
	return r.one - 1
}

// checkInvariants checks the ring of a series with total samples and
// returns the first violation found, nil if none, and the highest ID it
// holds: the ring holds at most one ID per sample; a spilled ring (big)
// holds at least two IDs (push and trim fold one back inline) in a
// power-of-two buffer of at least minRingCap, with first and n within it.
// The caller holds the series lock, and checks the highest ID against the
// high watermark read after releasing it: every ID in the ring was handed
// out before it was pushed. (Reading the watermark here, under the series
// lock, would cost a lock of isolation.mu per series.)
func (r *writeIDRing) checkInvariants(total uint64) (highest uint64, err error) {
	n := r.len()
	if uint64(n) > total {
		return 0, fmt.Errorf("write-ID ring holds %d IDs for %d samples", n, total)
	}
	if b := r.big; b != nil {
		c := len(b.ids)
		switch {
		case r.one != 0:
			return 0, fmt.Errorf("write-ID ring has an inline ID and a spilled ring")
		case c < minRingCap || c&(c-1) != 0:
			return 0, fmt.Errorf("write-ID ring has capacity %d, not a power of two of at least %d", c, minRingCap)
		case int(b.first) >= c || int(b.n) > c:
			return 0, fmt.Errorf("write-ID ring: first %d, n %d out of its capacity %d", b.first, b.n, c)
		case b.n < 2:
			return 0, fmt.Errorf("write-ID ring spilled with %d IDs", b.n)
		}
	}
	for i := range n {
		highest = max(highest, r.at(i))
	}
	return highest, nil
}

func (b *idRing) push(id uint64) {
	if int(b.n) == len(b.ids) {
		b.resize(2 * len(b.ids))
	}
	b.ids[(int(b.first)+int(b.n))&(len(b.ids)-1)] = id
	b.n++
}

// trim drops IDs below lowWatermark from the front, then halves the
// capacity until the ring is more than a quarter full.
func (b *idRing) trim(lowWatermark uint64) {
	mask := len(b.ids) - 1
	for b.n > 0 && b.ids[b.first] < lowWatermark {
		b.first = uint32((int(b.first) + 1) & mask)
		b.n--
	}
	if len(b.ids) <= minRingCap || int(b.n) > len(b.ids)/4 {
		return
	}
	c := len(b.ids)
	for c > minRingCap && int(b.n) <= c/4 {
		c /= 2
	}
	b.resize(c)
}

func (b *idRing) resize(capacity int) {
	ids := make([]uint64, capacity)
	for i := 0; i < int(b.n); i++ {
		ids[i] = b.ids[(int(b.first)+i)&(len(b.ids)-1)]
	}
	b.ids, b.first = ids, 0
}

func (b *idRing) at(i int) uint64 {
	return b.ids[(int(b.first)+i)&(len(b.ids)-1)]
}

// invisibleSamples returns the indices (in the series' sample numbering, see
// writeIDRing) of the samples inside the ring's window that snap must not
// see, ascending, appended to buf. total is the number of samples the series
// has had appended. A nil snapshot sees everything. The caller holds the
// series lock.
func invisibleSamples(snap *readSnapshot, r *writeIDRing, total uint64, buf []uint64) []uint64 {
	n := r.len()
	if snap == nil || n == 0 {
		return buf
	}
	base := total - uint64(n)
	for i := 0; i < n; i++ {
		if !snap.visible(r.at(i)) {
			buf = append(buf, base+uint64(i))
		}
	}
	return buf
}

// lateVisible reports whether snap sees the i-th sample of a late chunk
// whose write IDs are ids (nil: every sample is visible to all).
func lateVisible(snap *readSnapshot, ids []uint64, i int) bool {
	return ids == nil || snap.visible(ids[i])
}

// settledIDs reports whether every ID in ids is 0 or below lowWatermark,
// so that every open and future read sees the samples they belong to.
func settledIDs(ids []uint64, lowWatermark uint64) bool {
	for _, id := range ids {
		if id != 0 && id >= lowWatermark {
			return false
		}
	}
	return true
}

// newestVisible reports whether snap sees the newest sample of a series
// whose ring is r. The caller holds the series lock. With an empty ring
// every sample of the series is visible to all, the newest included.
func newestVisible(snap *readSnapshot, r *writeIDRing) bool {
	n := r.len()
	return snap == nil || n == 0 || snap.visible(r.at(n-1))
}

// allVisible reports whether snap sees every sample of a series whose ring
// is r. The caller holds the series lock. Samples before the ring's window
// are visible to all, so only the ring's IDs (usually one) are checked.
func allVisible(snap *readSnapshot, r *writeIDRing) bool {
	if snap == nil {
		return true
	}
	for i := range r.len() {
		if !snap.visible(r.at(i)) {
			return false
		}
	}
	return true
}

// visibleMetadata returns the metadata of a series whose versions are sm
// (nil: none) as snap sees it: the newest version, in the order commits
// applied them, whose write ID snap sees. ok is false if there is none.
// The caller holds the series lock.
func visibleMetadata(snap *readSnapshot, sm *seriesMeta) (m Metadata, ok bool) {
	if sm == nil {
		return Metadata{}, false
	}
	if snap.visible(sm.cur.id) {
		return sm.cur.m.Value(), true
	}
	for i := len(sm.older) - 1; i >= 0; i-- {
		if v := sm.older[i]; snap.visible(v.id) {
			return v.m.Value(), true
		}
	}
	return Metadata{}, false
}

// trimMetaVersions drops from older, the versions applied before newest
// (in application order), those no read can see any more: every version
// before the newest one whose write ID is below lowWatermark. A version
// with ID 0 or below the watermark is visible to every open and future
// read, which therefore never needs one applied before it. It returns
// nil if no version of older is needed.
func trimMetaVersions(older []metaVersion, newest metaVersion, lowWatermark uint64) []metaVersion {
	if newest.id < lowWatermark {
		return nil
	}
	for i := len(older) - 1; i >= 0; i-- {
		if older[i].id < lowWatermark {
			n := copy(older, older[i:])
			clear(older[n:]) // drop the handles
			older = older[:n]
			break
		}
	}
	if len(older) == 0 {
		return nil
	}
	return older
}
