package remote

import (
	"maps"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	ptsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"
)

// TestReceiverProcessKilled delivers to Prometheus's own receiver running
// in another process (childMain), which is killed with SIGKILL twice
// while the sender sends to it, each time with a write request applied to
// its TSDB and not answered, and restarted on the same directory and
// address. Samples are committed to isotsdb before, during and after the
// outages. In the end the Prometheus TSDB, reopened here after the last
// receiver closed it, holds every sample committed to isotsdb (at least
// once: a TSDB keeps no duplicates) and nothing else.
func TestReceiverProcessKilled(t *testing.T) {
	promDir := t.TempDir()
	// The first receiver applies its 6th request, does not answer it, and
	// is killed.
	rc := startChild(t, promDir, "127.0.0.1:0", 5)
	addr := rc.addr
	u, err := url.Parse("http://" + addr + "/api/v1/write")
	require.NoError(t, err)

	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(u)
	// A request in flight when the receiver dies fails at once (the
	// kernel resets its connection); a long timeout keeps the hung
	// request in flight until the kill on a slow machine.
	cfg.Timeout = 30 * time.Second
	s, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	retried := func() float64 { return testutil.ToFloat64(s.metrics.samplesRetried) }

	// 2020 samples, at most 100 a request: at least 21 requests.
	want := ingest(t, db, 20, 0, 100*15000, 15000, s.Notify)
	t.Logf("first receiver: %s", rc.waitLine(t, childHung))
	rc.kill(t)
	// Committed while no receiver runs: the sender retries.
	maps.Copy(want, ingest(t, db, 20, 101*15000, 200*15000, 15000, s.Notify))
	waitFor(t, childTimeout, "retries against the killed receiver", func() bool { return retried() > 0 })

	// The second receiver, on the same directory and address, gets the
	// backlog (at least 20 requests) and is killed with its 4th request.
	rc = startChild(t, promDir, addr, 3)
	t.Logf("second receiver: %s", rc.waitLine(t, childHung))
	before := retried()
	rc.kill(t)
	maps.Copy(want, ingest(t, db, 20, 201*15000, 250*15000, 15000, s.Notify))
	waitFor(t, childTimeout, "retries against the killed receiver", func() bool { return retried() > before })

	// The third receiver stays up until every sample has arrived.
	rc = startChild(t, promDir, addr, 0)
	for deadline := time.Now().Add(childTimeout); ; time.Sleep(50 * time.Millisecond) {
		missing := received(want, rc.samples(t))
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("missing %d of %d samples; sent %v, failed %v, retried %v, pending %v, position %v",
				missing, len(want), testutil.ToFloat64(s.metrics.samplesSent), testutil.ToFloat64(s.metrics.samplesFailed),
				retried(), testutil.ToFloat64(s.metrics.samplesPending), s.Position())
		}
	}
	t.Logf("%d samples; sent %v, failed %v, retried %v", len(want), testutil.ToFloat64(s.metrics.samplesSent),
		testutil.ToFloat64(s.metrics.samplesFailed), retried())
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	rc.stop(t)

	pdb, err := ptsdb.Open(promDir, nil, nil, ptsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	got, err := promSampleKeys(pdb)
	require.NoError(t, pdb.Close())
	require.NoError(t, err)
	require.Equal(t, sortedKeys(want), sortedKeys(got))
}

// sortedKeys returns m's keys, sorted.
func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }
