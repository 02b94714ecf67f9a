package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestFromDB runs every endpoint against a real database.
func TestFromDB(t *testing.T) {
	db, err := tsdb.Open(filepath.Join(t.TempDir(), "data"), nil, nil, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	ctx := context.Background()
	app := db.Appender(ctx)
	for _, inst := range []string{"a", "b"} {
		for ts := int64(1000); ts <= 10000; ts += 1000 {
			_, err := app.Append(0, labels.FromStrings("__name__", "up", "instance", inst), ts, 1)
			require.NoError(t, err)
			_, err = app.Append(0, labels.FromStrings("__name__", "requests_total", "instance", inst), ts, float64(ts))
			require.NoError(t, err)
		}
	}
	require.NoError(t, app.Commit())

	snapRoot := t.TempDir()
	h := NewHandler(FromDB(db), Options{EnableAdmin: true, SnapshotDir: snapRoot})

	code, env, _ := call(t, h, http.MethodGet, "/api/v1/status/tsdb", nil)
	require.Equal(t, http.StatusOK, code, "%+v", env)
	var st tsdbStatus
	require.NoError(t, json.Unmarshal(env.Data, &st))
	require.Equal(t, headStatsJSON{NumSeries: 4, NumLabelPairs: 4, MinTime: 1000, MaxTime: 10000}, st.HeadStats)
	require.Equal(t, []stat{{"requests_total", 2}, {"up", 2}}, st.SeriesCountByMetricName)

	// Delete [0 s, 5 s] of instance a.
	code, env, _ = call(t, h, http.MethodPost, "/api/v1/admin/tsdb/delete_series?"+`match%5B%5D=%7Binstance%3D%22a%22%7D&start=0&end=5`, nil)
	require.Equal(t, http.StatusNoContent, code, "%+v", env)
	require.Equal(t, map[string]int{
		`{__name__="requests_total", instance="a"}`: 5, `{__name__="up", instance="a"}`: 5,
		`{__name__="requests_total", instance="b"}`: 10, `{__name__="up", instance="b"}`: 10,
	}, countSamples(t, db))

	code, env, _ = call(t, h, http.MethodPut, "/api/v1/admin/tsdb/clean_tombstones", nil)
	require.Equal(t, http.StatusNoContent, code, "%+v", env)

	code, env, _ = call(t, h, http.MethodPost, "/api/v1/admin/tsdb/snapshot", nil)
	require.Equal(t, http.StatusOK, code, "%+v", env)
	var snap struct{ Name string }
	require.NoError(t, json.Unmarshal(env.Data, &snap))
	snapDir := filepath.Join(snapRoot, snap.Name)
	rep, err := check.Dir(vfs.OS(), snapDir)
	require.NoError(t, err, "the snapshot is a database")
	require.NoError(t, rep.Err())
	sdb, err := tsdb.OpenReadOnly(snapDir, nil, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, sdb.Close()) }()
	require.Equal(t, countSamples(t, db), countSamples(t, sdb), "the snapshot holds the head, deletion applied")

	// Without the admin API nothing changes.
	off := NewHandler(FromDB(db), Options{SnapshotDir: snapRoot})
	code, env, _ = call(t, off, http.MethodPost, "/api/v1/admin/tsdb/delete_series?match%5B%5D=up", nil)
	requireError(t, code, env, http.StatusInternalServerError, "unavailable", "admin APIs disabled")
	require.Equal(t, 30, sum(countSamples(t, db)), "20 samples of b, 10 of a")
}

// countSamples returns the number of samples of every series of db.
func countSamples(t *testing.T, db *tsdb.DB) map[string]int {
	t.Helper()
	q, err := db.Querier(0, 1<<40)
	require.NoError(t, err)
	defer q.Close()
	out := map[string]int{}
	ss := q.Select(context.Background())
	for ss.Next() {
		it := ss.At().Iterator(nil)
		n := 0
		for it.Next() != chunks.ValNone {
			n++
		}
		require.NoError(t, it.Err())
		out[ss.At().Labels().String()] = n
	}
	require.NoError(t, ss.Err())
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestAdminCancelledBehindCompaction: delete_series and clean_tombstones
// waiting behind a compaction return as soon as the request's context is
// cancelled (the client went away), deleting nothing.
func TestAdminCancelledBehindCompaction(t *testing.T) {
	db, err := tsdb.Open(filepath.Join(t.TempDir(), "data"), nil, nil, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	const hour = int64(3600_000)
	app := db.Appender(context.Background())
	for ts := int64(0); ts < 4*hour; ts += 60_000 {
		_, err := app.Append(0, labels.FromStrings("__name__", "up"), ts, 1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	// A Querier held open makes Compact wait, holding the compaction lock,
	// after it published the block of [0h, 2h).
	q, err := db.Querier(0, 4*hour)
	require.NoError(t, err)
	defer q.Close() // runs before db.Close if the test fails
	compacted := make(chan error, 1)
	go func() { compacted <- db.Compact(context.Background()) }()
	require.Eventually(t, func() bool { return len(db.Blocks()) == 1 }, 10*time.Second, time.Millisecond)

	h := NewHandler(FromDB(db), Options{EnableAdmin: true})
	for _, target := range []string{
		"/api/v1/admin/tsdb/delete_series?match%5B%5D=up&start=0&end=3600",
		"/api/v1/admin/tsdb/clean_tombstones",
	} {
		ctx, cancel := context.WithCancel(context.Background())
		rec := httptest.NewRecorder()
		served := make(chan struct{})
		go func() {
			defer close(served)
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, target, nil).WithContext(ctx))
		}()
		select {
		case <-served:
			require.Failf(t, "answered while a compaction holds the lock", "%s: %d %s", target, rec.Code, rec.Body)
		case <-time.After(20 * time.Millisecond): // makes the test meaningful; correctness does not rest on it
		}
		cancel()
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			require.Failf(t, "still blocked 5 s after its request was cancelled", "%s", target)
		}
		require.Equal(t, http.StatusInternalServerError, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), "context canceled")
	}
	require.NoError(t, q.Close())
	require.NoError(t, <-compacted)
	require.Equal(t, map[string]int{`{__name__="up"}`: 4 * 60}, countSamples(t, db), "nothing deleted")
}
