package remote

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestReceiverFaults runs ingestion while the receiver answers 503 and
// 429 with Retry-After, drops connections abruptly, and is killed and
// restarted on the same address; afterwards every sample has arrived at
// least once.
func TestReceiverFaults(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	s, err := New(dir, testConfig(rv.url(t)), nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())

	var n atomic.Int64
	rv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		switch n.Add(1) % 5 {
		case 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case 3: // abrupt close, no answer
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		default:
			return false
		}
		return true
	})
	want := ingest(t, db, 20, 0, 100*15000, 15000, s.Notify)
	rv.kill()
	more := ingest(t, db, 20, 101*15000, 200*15000, 15000, s.Notify)
	time.Sleep(200 * time.Millisecond) // sends fail with connection refused meanwhile
	rv.restart(t)
	for k, v := range more {
		want[k] = v
	}
	waitFor(t, 30*time.Second, "all samples", func() bool {
		missing := received(want, rv.counts(t))
		if missing > 0 {
			_, total := rv.deliveries()
			t.Logf("missing %d of %d; delivered %d, sent %v, failed %v, retried %v, pending %v, position %v, requests %d",
				missing, len(want), total, testutil.ToFloat64(s.metrics.samplesSent), testutil.ToFloat64(s.metrics.samplesFailed),
				testutil.ToFloat64(s.metrics.samplesRetried), testutil.ToFloat64(s.metrics.samplesPending), s.Position(), rv.requests.Load())
		}
		return missing == 0
	})
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	seen, _ := rv.deliveries()
	for k := range want {
		require.GreaterOrEqual(t, seen[k], 1, k)
	}
	require.Positive(t, testutil.ToFloat64(s.metrics.samplesRetried))
	// samplesFailed may be positive: a request the receiver applied but
	// whose answer was lost (the kill, or the client's timeout on a
	// loaded machine) is sent again, and Prometheus answers 400 to the
	// copies of samples it holds newer ones of (out of order), which is
	// not retried. Those samples had arrived: seen checks that.
}

// TestBadResponses checks which answers are retried: 400 is not (the batch
// is counted failed and the sender moves on), 500 and 429 are, and
// Retry-After sets the delay.
func TestBadResponses(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter string
		retried    bool
		minDelay   time.Duration
	}{
		{name: "400", status: http.StatusBadRequest},
		{name: "404", status: http.StatusNotFound},
		{name: "500", status: http.StatusInternalServerError, retried: true},
		{name: "503", status: http.StatusServiceUnavailable, retried: true},
		{name: "429", status: http.StatusTooManyRequests, retried: true},
		{name: "429 retry-after", status: http.StatusTooManyRequests, retryAfter: "1", retried: true, minDelay: time.Second},
		{name: "503 retry-after date", status: http.StatusServiceUnavailable,
			retryAfter: "date", retried: true, minDelay: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rv := newReceiver(t)
			dir := t.TempDir()
			db := openIso(t, dir, isoOptions())
			cfg := testConfig(rv.url(t))
			cfg.MinShards, cfg.MaxShards = 1, 1
			s, err := New(dir, cfg, nil, nil)
			require.NoError(t, err)

			var calls atomic.Int64
			var first, second atomic.Int64 // unix ns of the first two attempts
			rv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
				c := calls.Add(1)
				switch c {
				case 1:
					first.Store(time.Now().UnixNano())
				case 2:
					second.Store(time.Now().UnixNano())
				}
				if c > 1 && tc.retried {
					return false
				}
				switch tc.retryAfter {
				case "":
				case "date": // HTTP dates have whole seconds: 2 s ahead is at least 1 s
					w.Header().Set("Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
				default:
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				http.Error(w, "no", tc.status)
				return true
			})
			// One batch: 10 samples, sent after the batch deadline.
			want := ingest(t, db, 10, 0, 0, 15000, nil)
			require.NoError(t, s.Start())
			if tc.retried {
				waitFor(t, 10*time.Second, "samples", func() bool { return received(want, rv.counts(t)) == 0 })
				require.Equal(t, float64(10), testutil.ToFloat64(s.metrics.samplesRetried))
				require.Zero(t, testutil.ToFloat64(s.metrics.samplesFailed))
				require.GreaterOrEqual(t, time.Duration(second.Load()-first.Load()), tc.minDelay)
			} else {
				waitFor(t, 10*time.Second, "failure", func() bool { return testutil.ToFloat64(s.metrics.samplesFailed) == 10 })
				waitFor(t, 10*time.Second, "position", func() bool { return s.Position().Offset > 0 })
				require.Equal(t, int64(1), calls.Load())
				require.Zero(t, testutil.ToFloat64(s.metrics.samplesRetried))
			}
			require.NoError(t, s.Stop())
			require.NoError(t, db.Close())
		})
	}
}
