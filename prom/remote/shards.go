package remote

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/prompb"
)

// item is one sample queued for sending: a float (h and fh nil) or a
// native histogram (h or fh), with its start time st (0: none), its
// series' metadata as of its commit (nil: none), and the exemplars of its series logged in the same commit (with
// Config.SendExemplars). An item with exOnly set has no sample: it carries
// exemplars whose series has no sample in their commit. seq is the
// tracker sequence number of the WAL record it came from.
type item struct {
	s      *series
	h      *histogram.Histogram
	fh     *histogram.FloatHistogram
	meta   *seriesMeta
	ex     []prompb.Exemplar
	exOnly bool
	st, t  int64
	v      float64
	seq    uint64
}

// shardSet is a fixed number of shards, each a queue and a goroutine that
// sends it in batches. A series always goes to the same shard (its WAL
// reference modulo the number of shards), so its samples are sent in WAL
// order. The number of shards only changes by closing a set (which first
// sends everything queued) and starting another: samples of one series are
// never in two sets at once.
type shardSet struct {
	s      *Sender
	shards []*shard
	wg     sync.WaitGroup
	ctx    context.Context // cancelled to abandon sends in progress
	cancel context.CancelFunc
}

// shard is one queue. The reader appends to buf; the shard's goroutine
// takes batches from its front.
type shard struct {
	mu      sync.Mutex // protects buf and closing
	buf     []item
	closing bool // no more appends; send what is left and exit

	wake  chan struct{} // capacity 1: a batch is ready, or closing
	space chan struct{} // capacity 1: buf shrank
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func newShardSet(s *Sender, n int) *shardSet {
	ctx, cancel := context.WithCancel(context.Background())
	set := &shardSet{s: s, ctx: ctx, cancel: cancel, shards: make([]*shard, n)}
	for i := range set.shards {
		sh := &shard{wake: make(chan struct{}, 1), space: make(chan struct{}, 1)}
		set.shards[i] = sh
		set.wg.Add(1)
		go func() {
			defer set.wg.Done()
			set.run(sh)
		}()
	}
	s.metrics.shards.Set(float64(n))
	return set
}

// enqueue appends items to shard i, waiting while the shard holds
// Capacity samples or more. It appends all items or none: it returns ctx's
// error if ctx ends first, and errSkip if KeepWALFrom asks the reader to
// skip ahead (signalled on skip) while it waits.
func (set *shardSet) enqueue(ctx context.Context, i int, items []item, skip <-chan struct{}) error {
	sh := set.shards[i]
	capacity, batch := set.s.cfg.Capacity, set.s.cfg.MaxSamplesPerSend
	sh.mu.Lock()
	for len(sh.buf) >= capacity {
		sh.mu.Unlock()
		select {
		case <-sh.space:
		case <-ctx.Done():
			return ctx.Err()
		case <-skip:
			return errSkip
		}
		sh.mu.Lock()
	}
	sh.buf = append(sh.buf, items...)
	full := len(sh.buf) >= batch
	sh.mu.Unlock()
	if full {
		signal(sh.wake)
	}
	return nil
}

// close stops the set: every shard sends what it holds and exits. If
// that takes longer than deadline, sends in progress are abandoned (their
// samples stay unacknowledged, so the position stays before them until a
// later Sender sends them) and close reports false. If ctx ends first,
// close returns false at once and leaves the set draining; call close
// again to finish it.
func (set *shardSet) close(ctx context.Context, deadline time.Duration) bool {
	for _, sh := range set.shards {
		sh.mu.Lock()
		sh.closing = true
		sh.mu.Unlock()
		signal(sh.wake)
	}
	done := make(chan struct{})
	go func() {
		set.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(deadline)
	defer t.Stop()
	select {
	case <-done:
		set.cancel()
		return true
	case <-ctx.Done():
		return false
	case <-t.C:
		set.cancel()
		<-done
		return false
	}
}

// run is a shard's goroutine. It sends a batch when MaxSamplesPerSend
// samples are queued, when the batch send deadline ticks with samples
// queued (so a sample waits at most about two deadlines), and, when
// closing, until the queue is empty.
func (set *shardSet) run(sh *shard) {
	cfg := set.s.cfg
	tick := time.NewTicker(cfg.BatchSendDeadline)
	defer tick.Stop()
	var (
		batch    []item
		enc      encoder
		deadline bool
	)
	for set.ctx.Err() == nil {
		sh.mu.Lock()
		n := len(sh.buf)
		if n >= cfg.MaxSamplesPerSend || (n > 0 && (deadline || sh.closing)) {
			k := min(n, cfg.MaxSamplesPerSend)
			batch = append(batch[:0], sh.buf[:k]...)
			m := copy(sh.buf, sh.buf[k:])
			clear(sh.buf[m:n]) // drop references to sent series
			sh.buf = sh.buf[:m]
			sh.mu.Unlock()
			signal(sh.space)
			set.send(&enc, batch)
			deadline = false
			continue
		}
		closing := sh.closing
		sh.mu.Unlock()
		if closing {
			return
		}
		select {
		case <-sh.wake:
		case <-tick.C:
			deadline = true
		case <-set.ctx.Done():
		}
	}
}

// encoder holds a shard's reusable request buffers.
type encoder struct {
	ts      []prompb.TimeSeries
	samples []prompb.Sample
	hists   []prompb.Histogram
	pb      []byte
	snappy  []byte
	v2      v2Encoder
}

// encode returns the snappy-compressed WriteRequest for batch, valid until
// the next call. Each item gets its own TimeSeries, sharing the series'
// label slice: its sample or histogram and its exemplars (only exemplars
// for an exOnly item, as Prometheus's queue manager sends them).
func (e *encoder) encode(batch []item) ([]byte, error) {
	e.samples = e.samples[:0]
	e.hists = e.hists[:0]
	e.ts = e.ts[:0]
	for _, it := range batch {
		e.samples = append(e.samples, prompb.Sample{Timestamp: it.t, Value: it.v})
		switch {
		case it.h != nil:
			e.hists = append(e.hists, prompb.FromIntHistogram(it.t, it.h))
		case it.fh != nil:
			e.hists = append(e.hists, prompb.FromFloatHistogram(it.t, it.fh))
		default:
			e.hists = append(e.hists, prompb.Histogram{})
		}
	}
	for i, it := range batch {
		ts := prompb.TimeSeries{Labels: it.s.labels, Exemplars: it.ex}
		switch {
		case it.exOnly:
		case it.h != nil || it.fh != nil:
			ts.Histograms = e.hists[i : i+1 : i+1]
		default:
			ts.Samples = e.samples[i : i+1 : i+1]
		}
		e.ts = append(e.ts, ts)
	}
	req := prompb.WriteRequest{Timeseries: e.ts}
	size := req.Size()
	if cap(e.pb) < size {
		e.pb = make([]byte, size)
	}
	n, err := req.MarshalToSizedBuffer(e.pb[:size])
	clear(e.ts) // drop label and exemplar references
	clear(e.hists)
	if err != nil {
		return nil, err
	}
	e.snappy = snappy.Encode(e.snappy[:cap(e.snappy)], e.pb[size-n:size])
	return e.snappy, nil
}

// send sends batch with retries and then acknowledges its samples to the
// tracker, unless the set's context ended first.
func (set *shardSet) send(enc *encoder, batch []item) {
	s := set.s
	var (
		body       []byte
		err        error
		unsent     int // exemplars the message cannot carry
		n, nEx, hi = countBatch(batch)
	)
	if s.cfg.ProtobufMessage == WriteV2 {
		body, unsent, err = enc.v2.encode(batch)
	} else {
		body, err = enc.encode(batch)
	}
	if err == nil {
		err = s.sendWithRetry(set.ctx, body, n)
	}
	switch {
	case err == nil:
		s.metrics.samplesSent.Add(float64(n))
		s.metrics.exemplarsSent.Add(float64(nEx - unsent))
		s.metrics.exemplarsFailed.Add(float64(unsent))
		s.raiseHighest(hi)
	case set.ctx.Err() != nil && errors.Is(err, set.ctx.Err()):
		return // abandoned: stays unacknowledged, sent again after a restart
	default:
		s.metrics.samplesFailed.Add(float64(n))
		s.metrics.exemplarsFailed.Add(float64(nEx))
		s.logger.Error("remote write: batch dropped", "samples", n, "exemplars", nEx, "err", err)
	}
	// Batches hold runs of items of the same record, in record order.
	start := 0
	for i := 1; i <= len(batch); i++ {
		if i == len(batch) || batch[i].seq != batch[start].seq {
			s.tracker.done(batch[start].seq, i-start)
			start = i
		}
	}
}

// countBatch returns the number of samples (floats and histograms) and of
// exemplars in batch, and the highest sample time.
func countBatch(batch []item) (samples, exemplars int, highest int64) {
	for _, it := range batch {
		exemplars += len(it.ex)
		if !it.exOnly {
			samples++
			highest = max(highest, it.t)
		}
	}
	return samples, exemplars, highest
}
