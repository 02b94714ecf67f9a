package remote

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/internal/wlog"
)

// tracker computes the acknowledged position: the end of the longest
// prefix of the records read whose samples were all acknowledged (or given
// up on). The reader registers every record it reads, in WAL order, with
// add, before it queues the record's samples; shards report finished
// samples with done. Safe for concurrent use.
type tracker struct {
	mu      sync.Mutex // protects the fields below
	recs    []trackRec // records not yet wholly acknowledged; recs[head:] are live
	head    int        // index in recs of the oldest live record
	base    uint64     // sequence number of recs[0]
	acked   wlog.Position
	pending int // samples added and not yet done

	ackedSeg atomic.Int64     // acked.Segment, readable without mu
	gauge    prometheus.Gauge // set to pending
}

type trackRec struct {
	end     wlog.Position
	pending int
}

func newTracker(start wlog.Position, pending prometheus.Gauge) *tracker {
	t := &tracker{acked: start, gauge: pending}
	t.ackedSeg.Store(int64(start.Segment))
	return t
}

// add registers a record ending at end with n samples to be sent and
// returns its sequence number, which done takes.
func (t *tracker) add(end wlog.Position, n int) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	seq := t.base + uint64(len(t.recs))
	t.recs = append(t.recs, trackRec{end: end, pending: n})
	t.pending += n
	t.advanceLocked()
	return seq
}

// done records that n samples of record seq were acknowledged or given up.
func (t *tracker) done(seq uint64, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recs[seq-t.base].pending -= n
	t.pending -= n
	t.advanceLocked()
}

// advanceLocked moves the acknowledged position past finished records at
// the front and drops them.
func (t *tracker) advanceLocked() {
	for t.head < len(t.recs) && t.recs[t.head].pending == 0 {
		if t.recs[t.head].end.Compare(t.acked) > 0 {
			t.acked = t.recs[t.head].end
		}
		t.head++
	}
	if t.head == len(t.recs) {
		t.base += uint64(len(t.recs))
		t.recs, t.head = t.recs[:0], 0
	} else if t.head > 1024 && t.head > len(t.recs)/2 {
		n := copy(t.recs, t.recs[t.head:])
		t.base += uint64(t.head)
		t.recs, t.head = t.recs[:n], 0
	}
	t.ackedSeg.Store(int64(t.acked.Segment))
	t.gauge.Set(float64(t.pending))
}

// position returns the acknowledged position and the samples in flight.
func (t *tracker) position() (wlog.Position, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.acked, t.pending
}
