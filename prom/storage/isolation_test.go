package promstorage_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"
)

// TestIsolationThroughPromQL commits whole scrapes from several writers
// while readers evaluate aggregations through the PromQL engine, and checks
// that every evaluation saw each scrape whole or not at all.
//
// Writer w owns the series metric{job="w", i="0".."n-1"}; its round r
// writes the value r to all of them at time 30r seconds, in one commit.
// Each query is evaluated just after a round every writer has committed, so
// it sees, per job, the newest round visible to its snapshot (up to the
// evaluation time), and for each job:
//
//	sum(metric)               == n * r  for some round r >= 1
//	max(metric) - min(metric) == 0
//
// A read that saw part of a commit would mix rounds r and r-1 (or more):
// the spread would not be 0 and the sum would be n*(r-1)+k with 0 < k < n.
// (With Options.IsolationDisabled this test fails within a few queries.)
func TestIsolationThroughPromQL(t *testing.T) {
	const (
		seriesPerJob = 100
		writers      = 2
		readers      = 2
		queries      = 150 // per reader
		// Writers may commit this many rounds per query evaluated (and as
		// many before the first), so that writes and reads overlap all
		// along while the head stays small enough for the race detector.
		roundsPerQuery = 5
		// roundStep is the time between rounds, in ms: 30s, so that
		// the 5m lookback window holds a few samples per series.
		roundStep = 30_000
	)
	s := newStorage(t)
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	ctx := context.Background()

	var committed [writers]atomic.Int64 // newest committed round per writer
	done := make(chan struct{})
	var budget [writers]chan struct{} // one token per round a writer may commit
	for w := range budget {
		budget[w] = make(chan struct{}, (readers*queries+1)*roundsPerQuery)
		grant(budget[w], roundsPerQuery)
	}
	var wg, started sync.WaitGroup // started: every writer committed once
	started.Add(writers)
	writerErrs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			lsets := make([]labels.Labels, seriesPerJob)
			refs := make([]storage.SeriesRef, seriesPerJob)
			for i := range lsets {
				lsets[i] = labels.FromStrings("__name__", "metric", "job", fmt.Sprint(w), "i", fmt.Sprint(i))
			}
			for r := int64(1); ; r++ {
				select {
				case <-done:
					return
				case <-budget[w]:
				}
				app := s.Appender(ctx)
				for i := range lsets {
					ref, err := app.Append(refs[i], lsets[i], r*roundStep, float64(r))
					if err != nil {
						writerErrs <- fmt.Errorf("writer %d round %d: %w", w, r, err)
						_ = app.Rollback()
						if r == 1 {
							started.Done()
						}
						return
					}
					refs[i] = ref
				}
				if err := app.Commit(); err != nil {
					writerErrs <- fmt.Errorf("writer %d round %d: commit: %w", w, r, err)
					if r == 1 {
						started.Done()
					}
					return
				}
				committed[w].Store(r)
				if r == 1 {
					started.Done()
				}
			}
		})
	}

	exprs := []string{"sum by (job) (metric)", "max by (job) (metric) - min by (job) (metric)"}
	started.Wait()
	var checked atomic.Int64
	var rwg sync.WaitGroup
	readerErrs := make(chan error, readers)
	for rd := range readers {
		rwg.Go(func() {
			for q := range queries {
				// Evaluate just after the slowest writer's newest round: each
				// job then has a round within the lookback window, and rounds
				// past the evaluation time are ignored.
				newest := int64(math.MaxInt64)
				for w := range writers {
					newest = min(newest, committed[w].Load())
				}
				expr := exprs[(q+rd)%len(exprs)]
				qry, err := engine.NewInstantQuery(ctx, s, nil, expr, time.UnixMilli((newest+1)*roundStep))
				if err != nil {
					readerErrs <- err
					return
				}
				res := qry.Exec(ctx)
				if res.Err != nil {
					qry.Close()
					readerErrs <- res.Err
					return
				}
				vec, err := res.Vector()
				qry.Close()
				for w := range budget {
					grant(budget[w], roundsPerQuery)
				}
				if err != nil {
					readerErrs <- err
					return
				}
				if len(vec) != writers {
					readerErrs <- fmt.Errorf("%s at round %d: got %d results, want one per job: %v", expr, newest, len(vec), vec)
					return
				}
				for _, smp := range vec {
					if err := checkIsolated(expr == exprs[0], smp, seriesPerJob); err != nil {
						readerErrs <- fmt.Errorf("%s at round %d: %w", expr, newest, err)
						return
					}
					checked.Add(1)
				}
			}
		})
	}
	rwg.Wait()
	close(done)
	wg.Wait()
	close(readerErrs)
	close(writerErrs)
	for err := range writerErrs {
		require.NoError(t, err)
	}
	for err := range readerErrs {
		require.NoError(t, err)
	}
	var rounds int64
	for w := range writers {
		rounds += committed[w].Load()
	}
	t.Logf("%d aggregates checked over %d committed scrapes of %d series", checked.Load(), rounds, seriesPerJob)
	require.Equal(t, int64(readers*queries*writers), checked.Load())
}

// grant adds n tokens to a writer's budget. The channel's capacity holds
// every token the test grants, so this never blocks.
func grant(budget chan<- struct{}, n int) {
	for range n {
		budget <- struct{}{}
	}
}

// checkIsolated checks one per-job result of TestIsolationThroughPromQL.
func checkIsolated(isSum bool, smp promql.Sample, n int) error {
	if !isSum {
		if smp.F != 0 {
			return fmt.Errorf("job %s: max-min = %g, want 0 (a partial commit was seen)", smp.Metric.Get("job"), smp.F)
		}
		return nil
	}
	r := smp.F / float64(n)
	if r < 1 || r != math.Trunc(r) {
		return fmt.Errorf("job %s: sum = %g, not %d times a round number (a partial commit was seen)", smp.Metric.Get("job"), smp.F, n)
	}
	return nil
}
