package remote

import (
	"errors"
	"math"
	"os"

	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// The replay zone, and why a rejected request in it is split.
//
// Invariant: every sample committed to the DB (and kept by relabeling)
// reaches the receiver at least once, unless the receiver rejects that
// sample by itself, or the backlog cap gives it up (keep.go).
//
// The persisted position is a low-water mark over the shards: a new
// Sender resumes there, so it sends again what a faster shard of an
// earlier Sender already had acknowledged, or had sent without hearing
// the answer. A series is sent by one shard at a time, in WAL order, so
// what the receiver holds of a series from earlier Senders is a prefix of
// its samples; sent again, those samples are older than (or the same as)
// the receiver's newest of that series. A Prometheus TSDB accepts a
// same-valued duplicate at the same time but rejects an older sample, and
// Prometheus's 1.0 handler then rolls back the whole request and answers
// 400. Such a request may also hold samples the receiver never had (of
// other series, or later samples of the same series): dropping it would
// lose them.
//
// So a 1.0 request that the receiver rejects (ErrRejected) and that holds
// samples of the replay zone is split in halves, each sent (and split
// again if rejected) in order, down to single samples: only the samples
// the receiver rejects on their own are given up (counted in
// samples_failed_total, one log line per batch). A series' samples stay
// in WAL order, since the halves go one after the other. Outside the zone
// a rejected request is dropped whole, as before: a 400 there is the
// receiver's verdict on data sent once, and splitting it would cost
// requests for nothing the at-least-once promise needs.
//
// The replay zone is every record that ends at or before the end of the
// WAL when the Sender is created (replayEnd): an earlier Sender can only
// have sent records that were in the WAL then, whether it stopped cleanly,
// was abandoned at its flush deadline or crashed. Taking the WAL's end
// needs no state persisted by the earlier Sender, and so cannot fall
// behind what it sent, as a periodically written "furthest sent" mark
// would after a crash. The zone is larger than needed (it includes what
// no earlier Sender sent, and all of a first Sender's backlog); this only
// means more splitting for requests rejected there, never a lost sample.
//
// Skipping, per shard, what the earlier Sender had acknowledged was the
// alternative: it sends fewer requests, but needs per-shard progress
// persisted at every acknowledgement, is void after a change in the number
// of shards (series move between shards), and still misses requests sent
// and applied but not answered.
//
// Cost: nothing while no request is rejected (the reader compares each
// record's end with replayEnd). A rejected batch of n samples with r
// samples rejected on their own takes at most about 2r·log2(n) more
// requests; all n rejected (a shard's whole batch already stored), 2n-1.
//
// Remote write 2.0 requests are not split: a 2.0 receiver writes what it
// can and answers 400 for the rest (Prometheus's handler commits the
// samples it accepted before answering), so only the rejected samples are
// lost there already.

// walEnd returns the end of the WAL as it is now: the size of its newest
// segment. If the size cannot be read, the end of that segment (whatever
// it will hold) stands for it; with no segment, the start of the log.
func (s *Sender) walEnd() wlog.Position {
	segs, err := wlog.SegmentIndexes(vfs.OS(), s.walDir)
	if err != nil || len(segs) == 0 {
		if err != nil && !errNotExist(err) {
			s.logger.Error("remote write: listing WAL segments", "err", err)
			return wlog.EndOf(math.MaxInt) // unknown: all of it
		}
		return wlog.Position{}
	}
	last := segs[len(segs)-1]
	fi, err := os.Stat(wlog.SegmentName(s.walDir, last))
	if err != nil {
		return wlog.EndOf(last)
	}
	return wlog.Position{Segment: last, Offset: fi.Size()}
}

// splitRejected reports whether batch, which the receiver answered err,
// is to be sent again in parts: a rejected 1.0 request holding samples of
// the replay zone. Shard goroutines; batch holds items in record order.
func (s *Sender) splitRejected(batch []item, err error) bool {
	return s.cfg.ProtobufMessage == WriteV1 && errors.Is(err, ErrRejected) &&
		batch[0].seq < s.replaySeqs.Load()
}
