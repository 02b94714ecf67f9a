package promweb

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"
)

// isolationRun is what runIsolation saw.
type isolationRun struct {
	writes, reads int64
	// full counts the reads that saw a request (count n, not 0).
	full int64
	// bad counts the reads whose count was not a multiple of the
	// request size; first is the first such count.
	bad   int64
	first float64
}

// runIsolation writes, over loopback with Prometheus's remote-write
// client, requests of the same n series, request w giving each of them
// the value w at a time later than the previous request's, while a
// reader queries, through /api/v1/query as fast as it can,
//
//	count(iso_metric == scalar(max(iso_metric)))
//
// the number of series holding the newest value the query sees, until d
// has passed (or, with stopOnBad, the reader saw a bad count). Only
// request w wrote the value w, so a reader that sees whole requests
// counts n (or 0 before the first); a reader that sees part of request w
// counts fewer, a number that is not a multiple of n. Each request's
// samples are at the wall-clock time it was built (1 ms after the
// previous request's at least), and the handler's lookback delta is
// 500 ms, so a query reads only the last half second of samples: its
// cost stays the same however long the run (a series whose newest sample
// left the window is not counted; all of a request's samples leave it
// together). With split, each
// request's series are sent as two requests of n/2: what a receiver that
// cut a request into several transactions would commit.
func runIsolation(t *testing.T, n int, split, stopOnBad bool, d time.Duration) isolationRun {
	t.Helper()
	db := openIso(t)
	base := serve(t, isoHandler(t, db, Options{LookbackDelta: 500 * time.Millisecond}))
	client := newWriteClient(t, base)
	var ts int64
	var (
		run  isolationRun
		done atomic.Bool
		wg   sync.WaitGroup
		errs = make(chan error, 2)
	)
	// The run lasts d, and longer (up to 5d) until the reader has read
	// minReads times: on a loaded machine the writer can starve it.
	const minReads = 200
	deadline, hardDeadline := time.Now().Add(d), time.Now().Add(5*d)
	wg.Go(func() { // writer
		defer done.Store(true)
		for w := 0; !done.Load(); w++ {
			now := time.Now()
			if now.After(hardDeadline) || now.After(deadline) && atomic.LoadInt64(&run.reads) >= minReads {
				return
			}
			ts = max(ts+1, time.Now().UnixMilli())
			var series []prompb.TimeSeries
			for s := range n {
				series = append(series, promTS(labels.FromStrings("__name__", "iso_metric", "s", strconv.Itoa(s)), floatSample{ts, float64(w)}))
			}
			parts := [][]prompb.TimeSeries{series}
			if split {
				parts = [][]prompb.TimeSeries{series[:n/2], series[n/2:]}
			}
			for _, p := range parts {
				if _, err := client.Store(context.Background(), encodeWrite(t, &prompb.WriteRequest{Timeseries: p}), 0); err != nil {
					errs <- err
					return
				}
			}
			atomic.AddInt64(&run.writes, 1)
			time.Sleep(time.Millisecond) // leave the reader some CPU
		}
	})
	wg.Go(func() { // reader
		c := &http.Client{}
		q := "/api/v1/query?" + url.Values{"query": {"count(iso_metric == scalar(max(iso_metric)))"}}.Encode()
		for !done.Load() {
			resp, err := c.Get(base + q)
			if err != nil {
				errs <- err
				done.Store(true)
				return
			}
			r := decodeQuery(resp)
			if r.err != nil {
				errs <- r.err
				done.Store(true)
				return
			}
			atomic.AddInt64(&run.reads, 1)
			if int64(r.v) == int64(n) {
				run.full++
			}
			if int64(r.v)%int64(n) != 0 {
				if run.bad == 0 {
					run.first = r.v
				}
				run.bad++
				if stopOnBad {
					done.Store(true)
				}
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return run
}

// TestIsolation: a reader never sees part of a remote-write request.
func TestIsolation(t *testing.T) {
	const n = 64
	run := runIsolation(t, n, false, false, 2*time.Second)
	t.Logf("%d requests of %d series, %d reads (%d saw a request)", run.writes, n, run.reads, run.full)
	require.Zero(t, run.bad, "%d reads saw part of a request (first: count %v)", run.bad, run.first)
	require.Greater(t, run.writes, int64(10))
	require.GreaterOrEqual(t, run.reads, int64(100))
	require.GreaterOrEqual(t, run.full, run.reads/2, "most reads must see a request, else they test nothing")

	// The check fails when requests are split across transactions: the
	// same run, with each request sent as two, is caught.
	t.Run("split writer is caught", func(t *testing.T) {
		run := runIsolation(t, n, true, true, 10*time.Second)
		t.Logf("%d requests of %d series as two halves, %d reads, first bad count %v", run.writes, n, run.reads, run.first)
		require.NotZero(t, run.bad, "the reader never saw half a request")
	})
}
