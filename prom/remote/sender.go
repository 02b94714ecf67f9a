package remote

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/prompb"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
)

// Sender tails the WAL of one isotsdb DB and sends its float samples,
// native histograms, and (Config.SendExemplars) exemplars to one
// remote-write receiver, as remote write 1.0 or 2.0
// (Config.ProtobufMessage; 2.0 also carries start times and each series'
// metadata). Create it with New, run
// it with Start, end it with Stop. KeepWALFrom and Notify may be called at
// any time from any goroutine, before Start and after Stop included; the
// embedder calls Notify after its commits to have them sent without
// waiting for the next poll.
//
// Goroutines: one reader (WAL reading, series map, resharding), one per
// shard (sending), one position writer, and with remote write 1.0 and
// Config.Metadata.Send one metadata sender (metadata.go).
type Sender struct {
	cfg     Config
	walDir  string
	posPath string
	logger  *slog.Logger
	metrics *metrics
	client  *client
	tracker *tracker
	start   wlog.Position // acknowledged position at New
	resume  bool          // start came from a position file
	// replayEnd is the end of the WAL at New (replay.go): records ending
	// at or before it are in the replay zone. Set by New.
	replayEnd wlog.Position
	// replaySeqs is one past the tracker sequence number of the last
	// record with samples in the replay zone: items with a lower seq are
	// in it. Raised by the reader only.
	replaySeqs atomic.Uint64

	newestSeg atomic.Int64 // newest WAL segment the reader has seen
	skipTo    atomic.Int64 // segments below it are given up (keep.go)
	highest   atomic.Int64 // highest timestamp acknowledged, ms
	lastRetry atomic.Int64 // unix ns of the last failed attempt
	notify    chan struct{}
	skipCh    chan struct{} // capacity 1: skipTo was raised
	families  families      // remote write 1.0 metadata to send (metadata.go)
	// metaDone is closed when the metadata goroutine exits; nil if
	// metadata is not sent (2.0, or Config.Metadata.Send off). Set by New.
	metaDone chan struct{}

	// Owned by the reader goroutine; by Stop once the reader has exited.
	series       *seriesMap
	dec          record.Decoder
	shards       *shardSet
	samples      []record.RefSample
	hists        []record.RefHistogramSample
	fhists       []record.RefFloatHistogramSample
	pend         []pendingItem
	metas        []record.RefMetadata
	exs          []record.RefExemplar
	groupEx      map[uint64][]prompb.Exemplar // a commit group's exemplars not yet queued, by series
	inGroup      bool                         // a commit group's records are being processed
	records      uint64                       // records read while tailing
	gcCheckpoint int                          // newest checkpoint gcSeries applied, -1 none
	gcPending    *pendingGC                   // checkpoint gcSeries will apply later, or nil
	refs         []record.RefSeries
	group        commitGroup // commit group being read
	staging      [][]item
	nextShard    time.Time // when to reconsider the number of shards

	mu         sync.Mutex // protects state and cancel
	state      int        // 0 new, 1 started, 2 stopped
	cancel     context.CancelFunc
	readerDone chan struct{}
	posStop    chan struct{}
	posDone    chan struct{}
}

// New returns a Sender for the DB in dir (it reads dir/wal and keeps its
// position in dir/remote/<cfg.Name>.position). If a position file exists,
// sending resumes after it; otherwise it starts at the first WAL segment
// (samples only in a checkpoint are not sent). Metrics are registered on
// reg unless it is nil; a nil logger discards.
func New(dir string, cfg Config, logger *slog.Logger, reg prometheus.Registerer) (*Sender, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(reg, cfg.Name)
	if err != nil {
		return nil, err
	}
	s := &Sender{
		cfg:     cfg,
		walDir:  filepath.Join(dir, "wal"),
		posPath: positionPath(dir, cfg.Name),
		logger:  logger.With("remote_name", cfg.Name),
		metrics: m,
		client:  &client{url: cfg.URL.String(), hc: cfg.Client, timeout: cfg.Timeout, headers: cfg.Headers, msg: cfg.ProtobufMessage},
		notify:  make(chan struct{}, 1),
		skipCh:  make(chan struct{}, 1),
		series:  newSeriesMap(cfg.ExternalLabels, cfg.RelabelConfigs),
	}
	if cfg.ProtobufMessage == WriteV1 && cfg.Metadata.Send {
		s.metaDone = make(chan struct{})
	}
	s.start, s.resume, err = readPosition(s.posPath)
	if err != nil {
		return nil, err
	}
	s.replayEnd = s.walEnd()
	s.tracker = newTracker(s.start, m.samplesPending)
	s.newestSeg.Store(int64(s.start.Segment))
	s.skipTo.Store(-1)
	s.gcCheckpoint = -1
	m.positionSegment.Set(float64(s.start.Segment))
	return s, nil
}

// Start starts reading and sending. It returns ErrStopped if the Sender
// was started before.
func (s *Sender) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != 0 {
		return ErrStopped
	}
	s.state = 1
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.readerDone = make(chan struct{})
	s.posStop = make(chan struct{})
	s.posDone = make(chan struct{})
	s.shards = newShardSet(s, s.cfg.MinShards)
	s.nextShard = time.Now().Add(s.cfg.ReshardInterval)
	go func() {
		defer close(s.readerDone)
		s.read(ctx)
	}()
	go func() {
		defer close(s.posDone)
		s.writePositions()
	}()
	if s.metaDone != nil {
		go func() {
			defer close(s.metaDone)
			s.sendMetadata(ctx)
		}()
	}
	return nil
}

// Notify tells the sender that the WAL has grown, so that it reads now
// instead of at the next poll. It never blocks.
func (s *Sender) Notify() { signal(s.notify) }

// Stop stops reading, sends what is queued within Config.FlushDeadline
// (abandoning the rest, which a later Sender sends again), and writes the
// position file. It returns the error of that write. Calling it again, or
// on a Sender never started, only writes the position.
func (s *Sender) Stop() error {
	s.mu.Lock()
	if s.state == 1 {
		s.cancel()
		<-s.readerDone
		if s.metaDone != nil {
			<-s.metaDone
		}
		if !s.shards.close(context.Background(), s.cfg.FlushDeadline) {
			s.logger.Warn("remote write: flush deadline passed; unsent samples will be sent by the next sender")
		}
		close(s.posStop)
		<-s.posDone
	}
	s.state = 2
	s.mu.Unlock()
	return s.savePosition()
}

// Position returns the acknowledged position: every sample of the WAL
// records that end at or before it was acknowledged or given up (by the
// backlog cap, which moves it to the start of the first segment kept).
func (s *Sender) Position() wlog.Position {
	p, _ := s.tracker.position()
	if skip := int(s.skipTo.Load()); skip > p.Segment {
		p = wlog.Position{Segment: skip}
	}
	return p
}

func (s *Sender) savePosition() error {
	p := s.Position()
	if err := writePosition(s.posPath, p); err != nil {
		s.metrics.positionFailures.Inc()
		return err
	}
	s.metrics.positionSegment.Set(float64(p.Segment))
	return nil
}

// writePositions writes the position file every PositionFlushInterval
// while it changes, until posStop is closed.
func (s *Sender) writePositions() {
	t := time.NewTicker(s.cfg.PositionFlushInterval)
	defer t.Stop()
	last := s.start
	for {
		select {
		case <-s.posStop:
			return
		case <-t.C:
		}
		s.listSegments() // keeps newestSeg fresh for KeepWALFrom while the reader waits
		if p := s.Position(); p != last {
			if err := s.savePosition(); err != nil {
				s.logger.Error("remote write: cannot write position", "err", err)
				continue
			}
			last = p
		}
	}
}

func (s *Sender) raiseHighest(t int64) {
	for {
		cur := s.highest.Load()
		if t <= cur {
			return
		}
		if s.highest.CompareAndSwap(cur, t) {
			s.metrics.highestSent.Set(float64(t) / 1000)
			return
		}
	}
}

// sendWithRetry posts body until it is accepted, rejected (a 4xx other
// than 429: an error wrapping ErrRejected) or ctx ends (ctx's error).
// Other failures are retried after a delay that doubles from MinBackoff to
// MaxBackoff, or after what Retry-After asks if the answer carries it;
// retried is called before each retry.
func (s *Sender) sendWithRetry(ctx context.Context, body []byte, retried func()) error {
	backoff := s.cfg.MinBackoff
	for {
		s.metrics.requestsSent.Inc()
		retryAfter, err := s.client.post(ctx, body)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrRejected) {
			return err
		}
		s.lastRetry.Store(time.Now().UnixNano())
		retried()
		wait := backoff
		if retryAfter > 0 {
			wait = retryAfter
		}
		s.logger.Debug("remote write: retrying", "err", err, "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		backoff = min(2*backoff, s.cfg.MaxBackoff)
	}
}

// desiredShards is the resharding rule: with cur shards and pending
// samples in flight, double the shards (up to max) when the queues are
// more than half full and no send failed since the last decision (more
// shards do not help a receiver that is failing); halve them (down to min)
// when they are less than a tenth full; else keep cur.
func desiredShards(cur, minShards, maxShards, capacity, pending int, failing bool) int {
	total := cur * capacity
	switch {
	case pending > total/2 && !failing:
		return min(maxShards, cur*2)
	case pending < total/10:
		return max(minShards, cur/2)
	}
	return cur
}

// maybeReshard applies desiredShards once per ReshardInterval. It waits
// for the old shards to send everything they hold (however long a failing
// receiver takes: abandoning samples would stall the position), unless ctx
// ends first; then Stop finishes the old set. Reader goroutine only.
func (s *Sender) maybeReshard(ctx context.Context) {
	now := time.Now()
	if now.Before(s.nextShard) {
		return
	}
	s.nextShard = now.Add(s.cfg.ReshardInterval)
	_, pending := s.tracker.position()
	failing := now.Sub(time.Unix(0, s.lastRetry.Load())) < s.cfg.ReshardInterval
	cur := len(s.shards.shards)
	want := desiredShards(cur, s.cfg.MinShards, s.cfg.MaxShards, s.cfg.Capacity, pending, failing)
	if want == cur {
		return
	}
	s.logger.Info("remote write: resharding", "from", cur, "to", want)
	// Close waits for the queues to empty, so per-series order holds.
	if !s.shards.close(ctx, time.Duration(math.MaxInt64)) {
		return
	}
	s.shards = newShardSet(s, want)
}

// errNotExist reports whether err says a file is gone.
func errNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
