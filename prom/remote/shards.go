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

// item is one sample queued for sending: a float sample (x nil, or x
// with neither histogram) or a native histogram (x.h or x.fh), with its
// start time st (0: none), its series' metadata as of its commit (nil:
// none), and the exemplars of its series logged in the same commit (x.ex,
// with Config.SendExemplars). An item with x.exOnly set has no sample: it
// carries exemplars whose series has no sample in their commit. seq is
// the tracker sequence number of the WAL record it came from.
//
// Items are copied into and out of the shard queues, so the rare parts
// live behind x: a float sample takes 56 bytes.
type item struct {
	s     *series
	meta  *seriesMeta
	x     *itemExtra
	st, t int64
	v     float64
	seq   uint64
}

// itemExtra is the part of an item that most items lack. Each item has
// its own; it is not shared.
type itemExtra struct {
	h      *histogram.Histogram
	fh     *histogram.FloatHistogram
	ex     []prompb.Exemplar
	exOnly bool
}

// hist returns the item's integer histogram, or nil.
func (it *item) hist() *histogram.Histogram {
	if it.x == nil {
		return nil
	}
	return it.x.h
}

// floatHist returns the item's float histogram, or nil.
func (it *item) floatHist() *histogram.FloatHistogram {
	if it.x == nil {
		return nil
	}
	return it.x.fh
}

// exemplars returns the exemplars sent with the item.
func (it *item) exemplars() []prompb.Exemplar {
	if it.x == nil {
		return nil
	}
	return it.x.ex
}

// exOnly reports whether the item carries only exemplars.
func (it *item) exOnly() bool { return it.x != nil && it.x.exOnly }

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
// takes batches from buf[head:] and clears what it took. The queued items
// are buf[head:]; the space before head is reused (by moving the queued
// items to the front) only when it is at least half of buf, so that each
// item is moved at most once on average.
type shard struct {
	mu      sync.Mutex // protects buf, head and closing
	buf     []item
	head    int
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
	for len(sh.buf)-sh.head >= capacity {
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
	if len(sh.buf)+len(items) > cap(sh.buf) && sh.head >= len(sh.buf)/2 {
		n := copy(sh.buf, sh.buf[sh.head:])
		clear(sh.buf[n:]) // drop references to sent series
		sh.buf, sh.head = sh.buf[:n], 0
	}
	sh.buf = append(sh.buf, items...)
	full := len(sh.buf)-sh.head >= batch
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
		n := len(sh.buf) - sh.head
		if n >= cfg.MaxSamplesPerSend || (n > 0 && (deadline || sh.closing)) {
			k := min(n, cfg.MaxSamplesPerSend)
			taken := sh.buf[sh.head : sh.head+k]
			batch = append(batch[:0], taken...)
			clear(taken) // drop references to sent series
			if sh.head += k; sh.head == len(sh.buf) {
				sh.buf, sh.head = sh.buf[:0], 0
			}
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
	samples []prompb.Sample    // backing of the TimeSeries' samples
	hists   []prompb.Histogram // backing of the TimeSeries' histograms
	pb      []byte
	snappy  []byte
	v2      v2Encoder
}

// encode returns the snappy-compressed WriteRequest for batch, valid until
// the next call. Each item gets its own TimeSeries, sharing the series'
// label slice: its sample or histogram and its exemplars (only exemplars
// for an exOnly item, as Prometheus's queue manager sends them).
func (e *encoder) encode(batch []item) ([]byte, error) {
	e.ts = e.ts[:0]
	// Size the backing slices first, so that appending to them never
	// moves what earlier TimeSeries point into.
	nHists := 0
	for i := range batch {
		if batch[i].hist() != nil || batch[i].floatHist() != nil {
			nHists++
		}
	}
	if cap(e.samples) < len(batch)-nHists {
		e.samples = make([]prompb.Sample, 0, len(batch))
	}
	if cap(e.hists) < nHists {
		e.hists = make([]prompb.Histogram, 0, nHists)
	}
	e.samples, e.hists = e.samples[:0], e.hists[:0]
	for i := range batch {
		it := &batch[i]
		ts := prompb.TimeSeries{Labels: it.s.labels, Exemplars: it.exemplars()}
		switch h, fh := it.hist(), it.floatHist(); {
		case it.exOnly():
		case h != nil:
			e.hists = append(e.hists, prompb.FromIntHistogram(it.t, h))
			ts.Histograms = e.hists[len(e.hists)-1 : len(e.hists) : len(e.hists)]
		case fh != nil:
			e.hists = append(e.hists, prompb.FromFloatHistogram(it.t, fh))
			ts.Histograms = e.hists[len(e.hists)-1 : len(e.hists) : len(e.hists)]
		default:
			e.samples = append(e.samples, prompb.Sample{Timestamp: it.t, Value: it.v})
			ts.Samples = e.samples[len(e.samples)-1 : len(e.samples) : len(e.samples)]
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
// tracker, unless the set's context ended first. A batch in the replay
// zone that a 1.0 receiver rejects is sent again in parts (replay.go).
func (set *shardSet) send(enc *encoder, batch []item) {
	var rej rejected
	if !set.deliver(enc, batch, &rej) {
		return // abandoned: stays unacknowledged, sent again after a restart
	}
	if rej.samples > 0 || rej.exemplars > 0 {
		set.s.logger.Error("remote write: batch dropped", "samples", rej.samples, "exemplars", rej.exemplars,
			"requests", rej.requests, "err", rej.err)
	}
	// Batches hold runs of items of the same record, in record order.
	start := 0
	for i := 1; i <= len(batch); i++ {
		if i == len(batch) || batch[i].seq != batch[start].seq {
			set.s.tracker.done(batch[start].seq, i-start)
			start = i
		}
	}
}

// rejected sums what deliver gave up on in one batch, for one log line.
type rejected struct {
	samples, exemplars int
	requests           int // rejected requests
	err                error
}

// deliver sends batch with retries and counts the outcome in the metrics
// (and what was given up in rej). It returns false if the set's context
// ended first (nothing of batch counted, though parts of a split batch
// may have been delivered).
func (set *shardSet) deliver(enc *encoder, batch []item, rej *rejected) bool {
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
		err = s.sendWithRetry(set.ctx, body, func() { s.metrics.samplesRetried.Add(float64(n)) })
	}
	switch {
	case err == nil:
		s.metrics.samplesSent.Add(float64(n))
		s.metrics.exemplarsSent.Add(float64(nEx - unsent))
		s.metrics.exemplarsFailed.Add(float64(unsent))
		s.raiseHighest(hi)
	case set.ctx.Err() != nil && errors.Is(err, set.ctx.Err()):
		return false
	case len(batch) > 1 && s.splitRejected(batch, err):
		h := len(batch) / 2
		return set.deliver(enc, batch[:h], rej) && set.deliver(enc, batch[h:], rej)
	default:
		// A 2.0 receiver may have stored part of the request (a partial
		// write) and say so: that part counts as sent, as Prometheus's
		// queue manager counts it.
		var herr *HTTPError
		if errors.As(err, &herr) && herr.Written != nil {
			w := herr.Written
			sent, exSent := min(w.Samples+w.Histograms, n), min(w.Exemplars, nEx-unsent)
			s.metrics.samplesSent.Add(float64(sent))
			s.metrics.exemplarsSent.Add(float64(exSent))
			n, nEx = n-sent, nEx-exSent
		}
		s.metrics.samplesFailed.Add(float64(n))
		s.metrics.exemplarsFailed.Add(float64(nEx))
		rej.samples += n
		rej.exemplars += nEx
		rej.requests++
		rej.err = err
	}
	return true
}

// countBatch returns the number of samples (floats and histograms) and of
// exemplars in batch, and the highest sample time.
func countBatch(batch []item) (samples, exemplars int, highest int64) {
	for i := range batch {
		it := &batch[i]
		exemplars += len(it.exemplars())
		if !it.exOnly() {
			samples++
			highest = max(highest, it.t)
		}
	}
	return samples, exemplars, highest
}
