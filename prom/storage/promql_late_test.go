package promstorage_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// PromQL over late data: isotsdb (through the adapter) and Prometheus's own
// TSDB are fed the same stream of commits, in which about a tenth of the
// samples arrive minutes after their scrape, and must then answer the same
// PromQL queries identically: with everything in the head, after a
// restart (the late samples replayed from the WALs), after compaction (the
// first block range, late samples included, in blocks) and after a restart
// of the compacted DBs. Floats are compared exactly, with no tolerance (see
// buildLateWorkload on the order of series), histograms as sameHist says.
//
// The lateness of the workload. With a window of 30 minutes and 2h blocks
// every late sample falls inside isotsdb's head's in-order appendable range
// (the window's lower end, newest minus 30m, is above the half-block bound,
// newest minus 1h). The workload's late samples are 1 to 10 minutes late,
// its too-old ones 31 to 90 minutes, and the stream ends before the head
// spans the 1.5 block ranges that make it compactable, so that neither DB
// compacts while it is fed; the test asserts that neither rejects any
// sample with ErrOutOfBounds. TestPromQLOverLateDataBehindBlocks runs a
// wide-window variant in which late samples fall behind the head's range
// into ranges both DBs have already written into blocks.
//
// Re-appends. The workload's duplicates repeat a stored sample exactly;
// both DBs accept them and store nothing new. A late sample at the time of
// a stored one but with another value is left out, as the DBs differ by
// design: isotsdb rejects it with ErrDuplicateSampleForTimestamp, while
// Prometheus's out-of-order head accepts it without comparing it with the
// in-order sample at that time (its queries then return the late value),
// and drops it silently at commit if its open out-of-order chunk has a
// sample at that time.

const (
	lwWindow     = 30 * time.Minute
	lwBlockRange = 2 * time.Hour
	lwStep       = int64(15_000) // scrape interval, ms
	// lwScrapes scrapes cover [lwBase, lwBase+3h]: a span of exactly 1.5
	// block ranges, which is not yet compactable.
	lwScrapes = 721
	// lwBase is 40 minutes past a block boundary, so that the block
	// boundary lwBase+1h20m lies inside the data (and late samples arrive
	// on both sides of it).
	lwBase = 236112*7_200_000 + 40*minute

	lwMaxDelay = 40 // scrapes (10 minutes)
	lwMinDelay = 4  // scrapes (1 minute)
	// lwDupSpan: duplicates repeat samples delivered up to this many
	// commits before.
	lwDupSpan = 40
)

// lateParams shape a late workload and the DBs it is fed to.
type lateParams struct {
	window             time.Duration // OutOfOrderTimeWindow of both DBs
	scrapes            int           // scrapes from lwBase on, lwStep apart
	minDelay, maxDelay int           // a late sample's delay, in scrapes
	// Too-old samples are tooOld plus up to tooOldSpan before the head's
	// newest sample.
	tooOld, tooOldSpan int64
	// compactEvery: the feed compacts both DBs after every compactEvery
	// commits; 0: never.
	compactEvery int
	// steps are the range queries' steps; nil: 15s, 1m and 5m.
	steps []time.Duration
	// instants are the scrapes at (and 7s after) which instant queries
	// run; nil: early ones, those around each block boundary and the last
	// ones.
	instants []int64
}

// narrowLate is TestPromQLOverLateData's workload (see the comment at the
// top).
var narrowLate = lateParams{
	window: lwWindow, scrapes: lwScrapes, minDelay: lwMinDelay, maxDelay: lwMaxDelay,
	tooOld: 31 * minute, tooOldSpan: 59 * minute,
}

// What a delivered sample is, as the workload means it.
const (
	tagOnTime = iota
	tagLate
	tagDuplicate // the same sample again, already stored
	tagTooOld    // older than the window allows
	tagOtherKind // a late float into a histogram series or vice versa
	numTags
)

var tagNames = [numTags]string{"on time", "late", "duplicate", "too old", "other kind"}

// The kinds of series.
const (
	kindCounter    = iota
	kindCPU        // a float counter with fractional increments
	kindGauge      // large integers
	kindTemp       // fractional gauge
	kindQueue      // small integer gauge
	kindIntHist    // integer exponential histogram, a counter
	kindFloatHist  // float exponential histogram, a counter
	kindGaugeHist  // integer gauge histogram
	kindCustomHist // integer histogram with custom buckets, a counter
)

func isHistKind(k int) bool { return k >= kindIntHist }

// lwSeries is one series of the workload and its generator state.
type lwSeries struct {
	ls   labels.Labels
	kind int

	v float64 // float series: the current value
	// histogram series: the current cumulative (or gauge) counts
	zero, sum float64
	buckets   []float64
	growAt    int // scrape at which the bucket layout grows
}

// delivery is one sample appended in a commit.
type delivery struct {
	series int
	s      tsample
	tag    int
}

// lateWorkload is the stream fed to both DBs, commit by commit.
type lateWorkload struct {
	series  []*lwSeries
	commits [][]delivery
	tags    [numTags]int // deliveries per tag
	p       lateParams
}

var customBounds = []float64{0.1, 0.5, 1, 5, 10}

// buildLateWorkload returns the deterministic workload shaped by p.
func buildLateWorkload(p lateParams) *lateWorkload {
	rng := rand.New(rand.NewPCG(20261205, 42))
	w := &lateWorkload{p: p}
	add := func(name string, kind int, job, inst string, extra ...string) {
		kv := append([]string{"__name__", name, "job", job, "instance", inst}, extra...)
		w.series = append(w.series, &lwSeries{ls: labels.FromStrings(kv...), kind: kind, growAt: 100 + rng.IntN(500)})
	}
	for _, job := range []string{"api", "web"} {
		for i := range 5 {
			inst := fmt.Sprintf("10.0.0.%d:9090", i)
			for _, method := range []string{"GET", "POST"} {
				for _, code := range []string{"200", "500"} {
					add("http_requests_total", kindCounter, job, inst, "method", method, "code", code)
				}
			}
			add("process_cpu_seconds_total", kindCPU, job, inst)
			add("memory_bytes", kindGauge, job, inst)
			for s := range 4 {
				add("temperature_celsius", kindTemp, job, inst, "sensor", fmt.Sprint(s))
			}
			for _, q := range []string{"high", "low", "bulk"} {
				add("queue_length", kindQueue, job, inst, "queue", q)
			}
			for _, k := range []string{"timeout", "refused", "internal"} {
				add("errors_total", kindCounter, job, inst, "kind", k)
			}
			add("request_duration_seconds", kindIntHist, job, inst)
			add("response_size_bytes", kindFloatHist, job, inst)
			if i < 3 {
				add("inflight_requests", kindGaugeHist, job, inst)
			}
			if i < 2 {
				add("batch_size", kindCustomHist, job, inst)
			}
		}
	}

	// The series are created in label order, by the first commit, which
	// holds the first scrape of every series, on time and in this order.
	// The engine selects series unsorted and aggregates them in the order
	// it gets them: Prometheus's head returns them in the order they were
	// created, isotsdb in label order. Were the two orders different, sums
	// and averages across series could differ in their last bits (as
	// avg by (job) (temperature_celsius) does when the first commit is
	// shuffled); with the same order every float compares exactly.
	slices.SortFunc(w.series, func(a, b *lwSeries) int { return labels.Compare(a.ls, b.ls) })

	w.commits = make([][]delivery, p.scrapes+p.maxDelay+1)
	// used (series, time) keeps the samples of the other kind at times
	// that have no sample yet.
	used := map[[2]int64]bool{}
	for k := range len(w.commits) {
		if k < p.scrapes {
			t := lwBase + int64(k)*lwStep
			for i, s := range w.series {
				d := delivery{series: i, s: s.next(rng, k, t), tag: tagOnTime}
				c := k
				if rng.IntN(10) == 0 && k > 0 {
					c += p.minDelay + rng.IntN(p.maxDelay-p.minDelay+1)
					d.tag = tagLate
				}
				w.commits[c] = append(w.commits[c], d)
			}
		}
		w.addExtras(rng, k, used)
		if k > 0 {
			rng.Shuffle(len(w.commits[k]), func(a, b int) {
				w.commits[k][a], w.commits[k][b] = w.commits[k][b], w.commits[k][a]
			})
		}
		for _, d := range w.commits[k] {
			w.tags[d.tag]++
		}
	}
	return w
}

// addExtras adds to commit k exact duplicates of samples delivered by the
// commits before it, samples older than the window, and late samples of the
// other kind. The head's newest sample, when commit k is appended, is at
// most the time of scrape k-1.
func (w *lateWorkload) addExtras(rng *rand.Rand, k int, used map[[2]int64]bool) {
	p := w.p
	if k < lwDupSpan+1 {
		return
	}
	// Duplicates of samples delivered 1 to 40 commits ago (at most 20
	// minutes behind the head's newest sample, inside the window): on-time
	// ones (of commit k-1 these are their series' newest), late ones and
	// those of the other kind alike.
	for range 3 {
		j := k - 1 - rng.IntN(lwDupSpan)
		if rng.IntN(3) == 0 {
			j = k - 1
		}
		src := w.commits[j]
		for range 10 {
			d := src[rng.IntN(len(src))]
			if d.tag == tagOnTime || d.tag == tagLate || d.tag == tagOtherKind {
				d.tag = tagDuplicate
				w.commits[k] = append(w.commits[k], d)
				break
			}
		}
	}
	now := lwBase + int64(k)*lwStep
	newest := lwBase + int64(min(k-1, p.scrapes-1))*lwStep // the head's newest sample
	// Too old: beyond the window, 31 to 90 minutes before the head's
	// newest sample with narrowLate (whether or not the series has a
	// sample at that time: the window is checked first).
	if k%3 == 0 {
		i := rng.IntN(len(w.series))
		t := newest - p.tooOld - rng.Int64N(p.tooOldSpan)
		w.commits[k] = append(w.commits[k], delivery{series: i, s: w.series[i].otherSample(rng, t, false), tag: tagTooOld})
	}
	// The other kind, as late as late samples (1 to 10 minutes with
	// narrowLate), between two scrapes.
	if k%7 == 0 && k < p.scrapes {
		i := rng.IntN(len(w.series))
		t := now - int64(p.minDelay+rng.IntN(p.maxDelay-p.minDelay+1))*lwStep + 7_000
		if key := [2]int64{int64(i), t}; !used[key] {
			used[key] = true
			w.commits[k] = append(w.commits[k], delivery{series: i, s: w.series[i].otherSample(rng, t, true), tag: tagOtherKind})
		}
	}
}

// next advances the series to scrape k, at t, and returns its sample.
func (s *lwSeries) next(rng *rand.Rand, k int, t int64) tsample {
	switch s.kind {
	case kindCounter:
		s.v += float64(rng.IntN(20))
		if rng.IntN(250) == 0 {
			s.v = float64(rng.IntN(5))
		}
		return tsample{t: t, f: s.v}
	case kindCPU:
		s.v += rng.Float64() * 0.5
		if rng.IntN(300) == 0 {
			s.v = rng.Float64()
		}
		return tsample{t: t, f: s.v}
	case kindGauge:
		return tsample{t: t, f: float64(100_000_000 + rng.IntN(1_000_000))}
	case kindTemp:
		return tsample{t: t, f: 20 + 3*rng.NormFloat64()}
	case kindQueue:
		return tsample{t: t, f: float64(rng.IntN(10))}
	}
	n := 4
	if s.kind == kindCustomHist {
		n = len(customBounds) + 1
	}
	switch {
	case s.kind == kindGaugeHist:
		s.buckets = make([]float64, n)
		for b := range s.buckets {
			s.buckets[b] = float64(rng.IntN(10))
		}
		s.zero, s.sum = float64(rng.IntN(3)), rng.Float64()*100
	case s.buckets == nil || rng.IntN(200) == 0: // first sample or a reset
		s.buckets = make([]float64, n)
		s.zero, s.sum = 0, 0
		s.growAt = k + 50 + rng.IntN(300)
	}
	if s.kind != kindGaugeHist {
		if k >= s.growAt && len(s.buckets) == 4 {
			s.buckets = append(s.buckets, 0, 0) // the layout changes
		}
		for b := range s.buckets {
			if s.kind == kindFloatHist {
				s.buckets[b] += rng.Float64() * 3
			} else {
				s.buckets[b] += float64(rng.IntN(5))
			}
		}
		if s.kind != kindCustomHist {
			s.zero += float64(rng.IntN(2))
		}
		s.sum += rng.Float64() * 10
	}
	if s.kind == kindFloatHist {
		return tsample{t: t, fh: s.floatHistogram()}
	}
	return tsample{t: t, h: s.intHistogram()}
}

// otherSample returns a sample at t with a value of its own: a float or a
// histogram, of the series' own kind or (other) of the other kind.
func (s *lwSeries) otherSample(rng *rand.Rand, t int64, other bool) tsample {
	if isHistKind(s.kind) == other {
		return tsample{t: t, f: rng.Float64() * 100}
	}
	if rng.IntN(2) == 0 {
		return tsample{t: t, fh: &histogram.FloatHistogram{
			Schema: 0, Count: 3.5, Sum: rng.Float64() * 10,
			PositiveSpans: []histogram.Span{{Offset: 1, Length: 2}}, PositiveBuckets: []float64{1.5, 2},
		}}
	}
	return tsample{t: t, h: &histogram.Histogram{
		Schema: 0, Count: 5, Sum: rng.Float64() * 10, ZeroThreshold: 0.001, ZeroCount: 1,
		PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []int64{3, -2},
	}}
}

// intHistogram returns the series' current counts as an integer histogram.
func (s *lwSeries) intHistogram() *histogram.Histogram {
	h := &histogram.Histogram{Schema: 1, Sum: s.sum}
	switch s.kind {
	case kindGaugeHist:
		h.CounterResetHint = histogram.GaugeType
	case kindCustomHist:
		h.Schema = histogram.CustomBucketsSchema
		h.CustomValues = slices.Clone(customBounds)
	}
	if s.kind != kindCustomHist {
		h.ZeroThreshold = 0.001
		h.ZeroCount = uint64(s.zero)
	}
	h.PositiveSpans = []histogram.Span{{Offset: -1, Length: uint32(len(s.buckets))}}
	if s.kind == kindCustomHist {
		h.PositiveSpans[0].Offset = 0
	}
	h.Count = h.ZeroCount
	prev := int64(0)
	for _, b := range s.buckets {
		h.PositiveBuckets = append(h.PositiveBuckets, int64(b)-prev)
		prev = int64(b)
		h.Count += uint64(b)
	}
	return h
}

// floatHistogram returns the series' current counts as a float histogram.
func (s *lwSeries) floatHistogram() *histogram.FloatHistogram {
	fh := &histogram.FloatHistogram{Schema: 2, Sum: s.sum, ZeroThreshold: 0.001, ZeroCount: s.zero, Count: s.zero}
	fh.PositiveSpans = []histogram.Span{{Offset: 3, Length: uint32(len(s.buckets))}}
	fh.PositiveBuckets = slices.Clone(s.buckets)
	for _, b := range s.buckets {
		fh.Count += b
	}
	return fh
}

// copySample returns s with a histogram of its own, so that neither DB can
// see what the other (or the workload) does to it.
func copySample(s tsample) tsample {
	if s.h != nil {
		s.h = s.h.Copy()
	}
	if s.fh != nil {
		s.fh = s.fh.Copy()
	}
	return s
}

// appendClass names what an Append's error means, through Prometheus's
// storage errors (which the adapter's errors also match).
func appendClass(err error) string {
	switch {
	case err == nil:
		return "accepted"
	case errors.Is(err, storage.ErrOutOfOrderSample):
		return "out of order"
	case errors.Is(err, storage.ErrTooOldSample):
		return "too old"
	case errors.Is(err, storage.ErrDuplicateSampleForTimestamp):
		return "duplicate"
	case errors.Is(err, storage.ErrOutOfBounds):
		return "out of bounds"
	}
	return "other: " + err.Error()
}

// lateDBs are the two DBs under comparison, and how to reopen them.
type lateDBs struct {
	t              *testing.T
	ourDir, theirs string
	ours           *promstorage.Storage
	prom           *promtsdb.DB
	p              lateParams
}

func (d *lateDBs) open() {
	o := tsdb.DefaultOptions()
	o.NoLockfile = true
	o.MinBlockDuration = lwBlockRange
	o.MaxBlockDuration = lwBlockRange
	o.OutOfOrderTimeWindow = d.p.window
	db, err := tsdb.Open(d.ourDir, nil, nil, o)
	require.NoError(d.t, err)
	d.ours = promstorage.New(db)

	po := promtsdb.DefaultOptions()
	po.MinBlockDuration = lwBlockRange.Milliseconds()
	po.MaxBlockDuration = lwBlockRange.Milliseconds()
	po.OutOfOrderTimeWindow = d.p.window.Milliseconds()
	d.prom, err = promtsdb.Open(d.theirs, nil, nil, po, nil)
	require.NoError(d.t, err)
	// Prometheus compacts only when the test asks. isotsdb's background
	// compaction stays on: woken by the commit that makes the head span 1.5
	// block ranges, it may compact the head while the next commits run,
	// before the test's Compact does (so the count of late samples behind
	// the head's range varies from run to run). Commits racing a head
	// compaction once lost a late sample at the restart
	// (tsdb.TestCheckpointKeepsCommitLoggedBeforeCompaction).
	d.prom.DisableCompactions()
}

func (d *lateDBs) close() {
	if d.ours != nil {
		require.NoError(d.t, d.ours.Close())
		d.ours = nil
	}
	if d.prom != nil {
		require.NoError(d.t, d.prom.Close())
		d.prom = nil
	}
}

// feedResult counts, per tag of the workload, the appends each outcome had
// (the same in both DBs).
type feedResult map[string][numTags]int

// feedStats is what a feed saw of the DBs' blocks.
type feedStats struct {
	compactions int // Compact calls on each DB
	// behindOurs counts the late samples accepted while older than the
	// end of isotsdb's newest block, that is behind its head's range;
	// behindProm those accepted while older than the start of
	// Prometheus's in-order head.
	behindOurs, behindProm int
	// ourMerges and promMerges count the blocks compacted from parents
	// that overlap each other (vertical compactions), seen after a
	// Compact; ourOverlaps counts the pairs of overlapping blocks isotsdb
	// had after one.
	ourMerges, promMerges, ourOverlaps int
}

// feed appends the workload to both DBs commit by commit and requires every
// Append to have the same outcome in both. With p.compactEvery set it
// compacts both DBs after every p.compactEvery commits.
func (d *lateDBs) feed(w *lateWorkload) (feedResult, feedStats) {
	t := d.t
	res := feedResult{}
	var st feedStats
	ourMerged, promMerged := map[string]bool{}, map[string]bool{}
	ctx := context.Background()
	for c, commit := range w.commits {
		ourEnd := blocksEnd(d.ours.DB().Blocks())
		promMint := d.prom.Head().MinTime()
		ours, theirs := d.ours.Appender(ctx), d.prom.Appender(ctx)
		for _, del := range commit {
			ls := w.series[del.series].ls
			_, errOurs := v1Sample(ours)(0, ls, copySample(del.s))
			_, errProm := v1Sample(theirs)(0, ls, copySample(del.s))
			co, cp := appendClass(errOurs), appendClass(errProm)
			if co != cp {
				require.Failf(t, "append outcomes differ", "commit %d, %s sample (%s) of %s: isotsdb %s (%v), Prometheus %s (%v)",
					c, tagNames[del.tag], del.s, ls, co, errOurs, cp, errProm)
			}
			n := res[co]
			n[del.tag]++
			res[co] = n
			if del.tag == tagLate && errOurs == nil {
				if del.s.t < ourEnd {
					st.behindOurs++
				}
				if del.s.t < promMint {
					st.behindProm++
				}
			}
		}
		require.NoError(t, ours.Commit())
		require.NoError(t, theirs.Commit())
		if d.p.compactEvery > 0 && c%d.p.compactEvery == d.p.compactEvery-1 {
			require.NoError(t, d.ours.DB().Compact(ctx))
			require.NoError(t, d.prom.Compact(ctx))
			st.compactions++
			ourBlocks := d.ours.DB().Blocks()
			for i, b := range ourBlocks {
				if parentsOverlap(b.Compaction.Parents, func(p tsdb.BlockDesc) (int64, int64) { return p.MinTime, p.MaxTime }) {
					ourMerged[b.ULID.String()] = true
				}
				for _, o := range ourBlocks[i+1:] {
					if b.MinTime < o.MaxTime && o.MinTime < b.MaxTime {
						st.ourOverlaps++
					}
				}
			}
			for _, b := range d.prom.Blocks() {
				m := b.Meta()
				if parentsOverlap(m.Compaction.Parents, func(p promtsdb.BlockDesc) (int64, int64) { return p.MinTime, p.MaxTime }) {
					promMerged[m.ULID.String()] = true
				}
			}
		}
	}
	st.ourMerges, st.promMerges = len(ourMerged), len(promMerged)
	return res, st
}

// blocksEnd returns the end of the newest of blocks, math.MinInt64 if
// there are none.
func blocksEnd(blocks []tsdb.BlockMeta) int64 {
	end := int64(math.MinInt64)
	for _, b := range blocks {
		end = max(end, b.MaxTime)
	}
	return end
}

// parentsOverlap reports whether two of a block's parents overlap in time.
func parentsOverlap[P any](parents []P, span func(P) (int64, int64)) bool {
	for i, a := range parents {
		amin, amax := span(a)
		for _, b := range parents[i+1:] {
			if bmin, bmax := span(b); amin < bmax && bmin < amax {
				return true
			}
		}
	}
	return false
}

// lateQueries are the expressions evaluated; all select the workload's
// metrics only.
var lateQueries = []string{
	`http_requests_total`,
	`request_duration_seconds`,
	`response_size_bytes`,
	`memory_bytes[20m]`,
	`inflight_requests[10m]`,
	`request_duration_seconds[10m]`,
	`{__name__=~"http_requests_total|batch_size"}[10m]`,
	`rate(http_requests_total[5m])`,
	`increase(errors_total[10m])`,
	`irate(process_cpu_seconds_total[1m])`,
	`rate(process_cpu_seconds_total[5m])`,
	`sum by (job) (rate(http_requests_total[5m]))`,
	`sum by (job, code) (increase(http_requests_total[15m]))`,
	`count(temperature_celsius)`,
	`avg by (job) (temperature_celsius)`,
	`sum(avg_over_time(temperature_celsius[10m]))`,
	`count by (job) (memory_bytes)`,
	`topk(3, memory_bytes)`,
	`bottomk(2, temperature_celsius)`,
	`avg_over_time(temperature_celsius[10m])`,
	`max_over_time(queue_length[5m])`,
	`count_over_time({__name__=~"http_requests_total|request_duration_seconds|response_size_bytes|batch_size"}[5m])`,
	`count_over_time(memory_bytes[2m])`,
	`last_over_time(temperature_celsius[3m])`,
	`last_over_time(response_size_bytes[3m])`,
	`resets(http_requests_total[30m])`,
	`resets(request_duration_seconds[30m])`,
	`resets(response_size_bytes[30m])`,
	`changes(queue_length[15m])`,
	`histogram_quantile(0.9, rate(request_duration_seconds[5m]))`,
	`histogram_quantile(0.5, sum by (job) (rate(response_size_bytes[5m])))`,
	`histogram_quantile(0.99, rate(batch_size[5m]))`,
	`histogram_count(rate(request_duration_seconds[5m]))`,
	`histogram_sum(response_size_bytes)`,
	`histogram_sum(rate(response_size_bytes[5m]))`,
	`histogram_avg(increase(batch_size[10m]))`,
	`histogram_count(inflight_requests)`,
	`rate(request_duration_seconds[5m])`,
	`sum(rate(response_size_bytes[5m]))`,
	`deriv(memory_bytes[10m])`,
	`timestamp(temperature_celsius)`,
	`timestamp(request_duration_seconds)`,
}

// comparison tallies what a phase compared.
type comparison struct {
	queries, floats, histograms int
}

// compareQueries evaluates every query in both DBs, as range queries over
// the whole data with steps of 15s, 1m and 5m and as instant queries at
// scrape times and 7s after them (where the samples of the other kind
// are), early, around the block boundary and at the end, and requires
// identical results. Late samples are everywhere but in the first scrape.
func (d *lateDBs) compareQueries(engine *promql.Engine, phase string) comparison {
	t := d.t
	var cmp comparison
	ctx := context.Background()
	last := int64(d.p.scrapes - 1)
	start, end := time.UnixMilli(lwBase), time.UnixMilli(lwBase+last*lwStep+10*minute)
	var instants []time.Time
	// Scrapes early, around each block boundary (lwBase+1h20m and every
	// 2h after it) and at the end.
	ks := []int64{2, 30, 200}
	for b := int64(320); b < last; b += 480 {
		ks = append(ks, b-1, b, b+1, b+160)
	}
	ks = append(ks, last-120, last-20, last-1, last)
	if d.p.instants != nil {
		ks = d.p.instants
	}
	for _, k := range ks {
		at := lwBase + k*lwStep
		instants = append(instants, time.UnixMilli(at), time.UnixMilli(at+7_000))
	}
	run := func(what string, newQuery func(storage.Queryable) (promql.Query, error)) {
		var results [2]*promql.Result
		for i, q := range []storage.Queryable{d.ours, d.prom} {
			qry, err := newQuery(q)
			require.NoError(t, err, what)
			results[i] = qry.Exec(ctx)
			defer qry.Close()
		}
		nf, nh, diff := compareResults(results[0], results[1])
		if diff != "" {
			require.Failf(t, "results differ", "%s, %s: %s", phase, what, diff)
		}
		cmp.queries++
		cmp.floats += nf
		cmp.histograms += nh
	}
	for _, qs := range lateQueries {
		steps := []time.Duration{15 * time.Second, time.Minute, 5 * time.Minute}
		if d.p.steps != nil {
			steps = d.p.steps
		}
		if strings.HasSuffix(qs, "]") {
			steps = nil // a range vector: instant queries only, returning the samples
		}
		for _, step := range steps {
			run(fmt.Sprintf("%s, step %s", qs, step), func(q storage.Queryable) (promql.Query, error) {
				return engine.NewRangeQuery(ctx, q, nil, qs, start, end, step)
			})
		}
		for _, at := range instants {
			run(fmt.Sprintf("%s at %d", qs, at.UnixMilli()), func(q storage.Queryable) (promql.Query, error) {
				return engine.NewInstantQuery(ctx, q, nil, qs, at)
			})
		}
	}
	return cmp
}

// compareResults returns the numbers of float and histogram points in a
// (the isotsdb result) and, if b differs from it, a description of the
// first difference. Floats must have identical bits (any NaN equals any
// NaN), histograms compare as sameHist says; errors and annotations must
// be the same.
func compareResults(a, b *promql.Result) (floats, hists int, diff string) {
	if (a.Err == nil) != (b.Err == nil) || (a.Err != nil && a.Err.Error() != b.Err.Error()) {
		return 0, 0, fmt.Sprintf("errors: isotsdb %v, Prometheus %v", a.Err, b.Err)
	}
	if wa, wb := annotationStrings(a), annotationStrings(b); !slices.Equal(wa, wb) {
		return 0, 0, fmt.Sprintf("annotations: isotsdb %q, Prometheus %q", wa, wb)
	}
	if a.Err != nil {
		return 0, 0, ""
	}
	if a.Value.Type() != b.Value.Type() {
		return 0, 0, fmt.Sprintf("types: isotsdb %s, Prometheus %s", a.Value.Type(), b.Value.Type())
	}
	switch va := a.Value.(type) {
	case promql.Matrix:
		vb := b.Value.(promql.Matrix)
		if len(va) != len(vb) {
			return 0, 0, fmt.Sprintf("isotsdb has %d series, Prometheus %d: %s", len(va), len(vb), firstSeriesDiff(va, vb))
		}
		for i := range va {
			sa, sb := va[i], vb[i]
			if !labels.Equal(sa.Metric, sb.Metric) {
				return 0, 0, fmt.Sprintf("series %d: isotsdb %s, Prometheus %s", i, sa.Metric, sb.Metric)
			}
			for j := range max(len(sa.Floats), len(sb.Floats)) {
				if j >= len(sa.Floats) || j >= len(sb.Floats) || !sameFloatPoint(sa.Floats[j], sb.Floats[j]) {
					return 0, 0, fmt.Sprintf("%s: float point %d: isotsdb %v, Prometheus %v",
						sa.Metric, j, pointAt(sa.Floats, j), pointAt(sb.Floats, j))
				}
			}
			for j := range max(len(sa.Histograms), len(sb.Histograms)) {
				if j >= len(sa.Histograms) || j >= len(sb.Histograms) || !sameHistPoint(sa.Histograms[j], sb.Histograms[j]) {
					return 0, 0, fmt.Sprintf("%s: histogram point %d: isotsdb %v, Prometheus %v",
						sa.Metric, j, histDetail(sa.Histograms, j), histDetail(sb.Histograms, j))
				}
			}
			floats += len(sa.Floats)
			hists += len(sa.Histograms)
		}
	case promql.Vector:
		vb := b.Value.(promql.Vector)
		if len(va) != len(vb) {
			return 0, 0, fmt.Sprintf("isotsdb has %d samples, Prometheus %d", len(va), len(vb))
		}
		// Compared in label order: an instant vector's order is not
		// defined, except for topk and bottomk, whose order follows from
		// the values they compare (equal here or the values differ too).
		sortVector(va)
		sortVector(vb)
		for i := range va {
			sa, sb := va[i], vb[i]
			same := labels.Equal(sa.Metric, sb.Metric) && sa.T == sb.T &&
				sameFloatBits(sa.F, sb.F) && (sa.H == nil) == (sb.H == nil) &&
				(sa.H == nil || sameHist(sa.H, sb.H))
			if !same {
				return 0, 0, fmt.Sprintf("sample %d: isotsdb %v, Prometheus %v", i, sa, sb)
			}
			if sa.H != nil {
				hists++
			} else {
				floats++
			}
		}
	case promql.Scalar:
		vb := b.Value.(promql.Scalar)
		if va.T != vb.T || !sameFloatBits(va.V, vb.V) {
			return 0, 0, fmt.Sprintf("isotsdb %v, Prometheus %v", va, vb)
		}
		floats++
	default:
		return 0, 0, fmt.Sprintf("unexpected result type %s", a.Value.Type())
	}
	return floats, hists, ""
}

func annotationStrings(r *promql.Result) []string {
	var out []string
	for _, err := range r.Warnings {
		out = append(out, err.Error())
	}
	sort.Strings(out)
	return out
}

func firstSeriesDiff(a, b promql.Matrix) string {
	names := func(m promql.Matrix) map[string]bool {
		out := map[string]bool{}
		for _, s := range m {
			out[s.Metric.String()] = true
		}
		return out
	}
	na, nb := names(a), names(b)
	var only []string
	for n := range na {
		if !nb[n] {
			only = append(only, "isotsdb only: "+n)
		}
	}
	for n := range nb {
		if !na[n] {
			only = append(only, "Prometheus only: "+n)
		}
	}
	sort.Strings(only)
	return strings.Join(only, "; ")
}

func pointAt[P any](ps []P, i int) any {
	if i < len(ps) {
		return ps[i]
	}
	return "none"
}

func sortVector(v promql.Vector) {
	sort.Slice(v, func(i, j int) bool { return labels.Compare(v[i].Metric, v[j].Metric) < 0 })
}

func sameFloatBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

func sameFloatPoint(a, b promql.FPoint) bool { return a.T == b.T && sameFloatBits(a.F, b.F) }

// sameHist compares histograms of query results: the same counts, bit for
// bit, in the same non-empty buckets (Equals after Compact), and compatible
// counter-reset hints. Empty buckets are left out because the layout of a
// histogram read back depends on the chunk it was stored in (a chunk holds
// one layout for all its samples, the union of theirs) and the chunks
// differ: Prometheus cuts and merges them where isotsdb does not. The
// query API leaves empty buckets out as well. The hints of
// counter histograms may differ where one DB knows (CounterReset or
// NotCounterReset) and the other says UnknownCounterReset: a hint is
// recorded per chunk and the DBs cut their chunks at different samples
// (Prometheus also leaves the hints of samples it merges from its
// out-of-order head or from overlapping blocks unknown). The difference
// is harmless only if the known hints are right, which
// checkHints verifies against the data; the functions that use hints
// (rate, increase, resets, ...) are compared by their results.
func sameHist(a, b *histogram.FloatHistogram) bool {
	if !a.Copy().Compact(0).Equals(b.Copy().Compact(0)) {
		return false
	}
	ha, hb := a.CounterResetHint, b.CounterResetHint
	return ha == hb || (ha != histogram.GaugeType && hb != histogram.GaugeType &&
		(ha == histogram.UnknownCounterReset || hb == histogram.UnknownCounterReset))
}

// checkHints reads every histogram series of q and requires each known
// counter-reset hint to be what the data says: CounterReset exactly where
// the histogram is a reset against the sample before it in the series, a
// histogram of either kind (PromQL's detection, DetectReset with the hint
// ignored), and NotCounterReset only where it is not. It returns the
// number of known hints checked.
func checkHints(t *testing.T, what string, q storage.Queryable) int {
	t.Helper()
	qr, err := q.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, qr.Close()) }()
	checked := 0
	for name, samples := range readTyped(t, qr) {
		for i := 1; i < len(samples); i++ {
			cur, prev := asFloatHist(samples[i]), asFloatHist(samples[i-1])
			if cur == nil || prev == nil {
				continue
			}
			hint := cur.CounterResetHint
			if hint != histogram.CounterReset && hint != histogram.NotCounterReset {
				continue
			}
			bare := cur.Copy()
			bare.CounterResetHint = histogram.UnknownCounterReset
			reset := bare.DetectReset(prev)
			require.Equal(t, reset, hint == histogram.CounterReset,
				"%s: %s at %d has hint %s, but its reset against the sample at %d is %v", what, name, samples[i].t, hint, samples[i-1].t, reset)
			checked++
		}
	}
	return checked
}

// readTyped returns the samples of every series of q, by labels.
func readTyped(t *testing.T, q storage.Querier) map[string][]tsample {
	t.Helper()
	out := map[string][]tsample{}
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	for ss.Next() {
		out[ss.At().Labels().String()] = drainTyped(t, ss.At().Iterator(nil))
	}
	require.NoError(t, ss.Err())
	return out
}

// asFloatHist returns the histogram of s as a float histogram, nil for a
// float sample.
func asFloatHist(s tsample) *histogram.FloatHistogram {
	switch {
	case s.h != nil:
		return s.h.ToFloat(nil)
	case s.fh != nil:
		return s.fh
	}
	return nil
}

func sameHistPoint(a, b promql.HPoint) bool { return a.T == b.T && sameHist(a.H, b.H) }

// TestPromQLOverLateData: PromQL over late data gives the same results in
// isotsdb as in Prometheus's TSDB fed the same samples, with everything in
// the head, after compaction and after a restart, and both DBs accept and
// reject the same appends.
func TestPromQLOverLateData(t *testing.T) {
	w := buildLateWorkload(narrowLate)
	require.Greater(t, len(w.series), 180)
	require.Greater(t, w.tags[tagLate], len(w.series)*lwScrapes/12, "about a tenth of the samples must be late")
	for tag, n := range w.tags {
		require.Positive(t, n, "the workload has %s samples", tagNames[tag])
	}

	d := &lateDBs{t: t, ourDir: t.TempDir(), theirs: t.TempDir(), p: narrowLate}
	d.open()
	t.Cleanup(d.close)

	res, _ := d.feed(w)
	for class, n := range res {
		t.Logf("appends %s: %v", class, n)
	}
	// The workload does what it means to in both DBs (they agree, see
	// feed): every late, duplicate and other-kind sample is accepted
	// (duplicates as no-ops), every too-old one rejected as too old, and
	// nothing is out of bounds (see the comment at the top).
	want := feedResult{
		"accepted": {tagOnTime: w.tags[tagOnTime], tagLate: w.tags[tagLate], tagDuplicate: w.tags[tagDuplicate], tagOtherKind: w.tags[tagOtherKind]},
		"too old":  {tagTooOld: w.tags[tagTooOld]},
	}
	require.Equal(t, want, res)

	engine := promqltest.NewTestEngine(t, false, 0, 50_000_000)
	// The counters of every kind have resets for rate and resets to see.
	for _, name := range []string{"http_requests_total", "process_cpu_seconds_total", "request_duration_seconds", "response_size_bytes", "batch_size"} {
		qs := fmt.Sprintf("sum(resets(%s[4h]))", name)
		qry, err := engine.NewInstantQuery(context.Background(), d.ours, nil, qs, time.UnixMilli(lwBase+4*time.Hour.Milliseconds()))
		require.NoError(t, err)
		res := qry.Exec(context.Background())
		require.NoError(t, res.Err)
		v, err := res.Vector()
		require.NoError(t, err)
		require.Len(t, v, 1, qs)
		require.Positive(t, v[0].F, qs)
		t.Logf("%s: %v", qs, v[0].F)
		qry.Close()
	}
	phases := []struct {
		name   string
		before func()
	}{
		{"head", func() {}},
		{"head after restart", func() {
			// isotsdb replays the late samples from its WAL, Prometheus
			// from its WAL and WBL.
			d.close()
			d.open()
		}},
		{"compacted", func() {
			// One sample of a series no query selects makes the head
			// span more than 1.5 block ranges, so that both compact the
			// first block range, lwBase-40m to lwBase+1h20m, late samples
			// included; Prometheus also compacts its whole out-of-order
			// head into blocks.
			trigger := labels.FromStrings("__name__", "compaction_trigger")
			at := lwBase + 3*time.Hour.Milliseconds() + 20*minute
			for _, app := range []storage.Appender{d.ours.Appender(context.Background()), d.prom.Appender(context.Background())} {
				_, err := app.Append(0, trigger, at, 1)
				require.NoError(t, err)
				require.NoError(t, app.Commit())
			}
			require.NoError(t, d.ours.DB().Compact(context.Background()))
			require.NoError(t, d.prom.Compact(context.Background()))
			require.NotEmpty(t, d.ours.DB().Blocks(), "isotsdb compacted nothing")
			require.NotEmpty(t, d.prom.Blocks(), "Prometheus compacted nothing")
			blockEnd := d.ours.DB().Blocks()[len(d.ours.DB().Blocks())-1].MaxTime
			require.Equal(t, lwBase+80*minute, blockEnd)
			require.GreaterOrEqual(t, d.ours.DB().Head().MinTime(), blockEnd, "the head keeps nothing of the block's range")
			require.Positive(t, w.lateBefore(blockEnd), "late samples in the block's range")
		}},
		{"compacted, after restart", func() {
			d.close()
			d.open()
		}},
	}
	for _, p := range phases {
		p.before()
		start := time.Now()
		cmp := d.compareQueries(engine, p.name)
		t.Logf("%s: %d queries, %d float and %d histogram points identical (%s)",
			p.name, cmp.queries, cmp.floats, cmp.histograms, time.Since(start).Round(time.Millisecond))
		hints := checkHints(t, p.name+", isotsdb", d.ours)
		promHints := checkHints(t, p.name+", Prometheus", d.prom)
		t.Logf("%s: known counter-reset hints right: isotsdb %d, Prometheus %d", p.name, hints, promHints)
		require.Positive(t, hints)
		require.Greater(t, cmp.floats, 400_000, "%s: too few float points compared", p.name)
		require.Greater(t, cmp.histograms, 40_000, "%s: too few histogram points compared", p.name)
	}
}

// lateBefore returns the number of late samples before t.
func (w *lateWorkload) lateBefore(t int64) int {
	n := 0
	for _, c := range w.commits {
		for _, d := range c {
			if d.tag == tagLate && d.s.t < t {
				n++
			}
		}
	}
	return n
}

func histDetail(ps []promql.HPoint, i int) string {
	if i >= len(ps) {
		return "none"
	}
	return fmt.Sprintf("%d %+v", ps[i].T, *ps[i].H)
}
