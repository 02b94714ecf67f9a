package promweb

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

// TestNewOptions checks the options New refuses.
func TestNewOptions(t *testing.T) {
	db := openIso(t)
	cases := []struct {
		name string
		db   *tsdb.DB
		opts Options
		ok   bool
	}{
		{name: "zero options", db: db, ok: true},
		{name: "all set", db: db, opts: Options{ReadOnly: true, QueryTimeout: time.Second, MaxSamples: 10, LookbackDelta: time.Minute}, ok: true},
		{name: "nil db", opts: Options{}},
		{name: "negative timeout", db: db, opts: Options{QueryTimeout: -1}},
		{name: "negative max samples", db: db, opts: Options{MaxSamples: -1}},
		{name: "negative lookback", db: db, opts: Options{LookbackDelta: -time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(tc.db, tc.opts)
			if tc.ok {
				require.NoError(t, err)
				require.NotNil(t, h)
				return
			}
			require.Error(t, err)
			require.Nil(t, h)
		})
	}
}

// TestQueryLimits checks that the max-samples and timeout options reach
// the engine: the same queries fail as they fail on Prometheus's API
// with the same options (status code, error type and message).
func TestQueryLimits(t *testing.T) {
	data := conformanceData()
	pdb, idb := openProm(t), openIso(t)
	appendAll(t, pdb, data)
	appendAll(t, isoStorage(idb), data)
	c := &http.Client{}
	q := "/api/v1/query_range?query=http_requests_total&start=" + confSeconds(0) + "&end=" + confSeconds(60) + "&step=15"
	for _, tc := range []struct {
		name string
		opts Options
		fail bool
	}{
		{name: "defaults"},
		{name: "max samples", opts: Options{MaxSamples: 100}, fail: true},
		{name: "timeout", opts: Options{QueryTimeout: time.Nanosecond}, fail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := get(t, c, serve(t, promHandler(t, pdb, tc.opts)), q, nil)
			got := get(t, c, serve(t, isoHandler(t, idb, tc.opts)), q, nil)
			require.Equal(t, tc.fail, want.code != http.StatusOK, want.raw)
			require.Equal(t, want.code, got.code, got.raw)
			require.Equal(t, want.body, got.body)
		})
	}
}

// TestRegisterer checks that the handler's metrics go to
// Options.Registerer, and that status/tsdb reports the head chunk count
// of a DB registering Prometheus's metric names with the same registry.
func TestRegisterer(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := isoOptions()
	o.MetricsNamespace = "prometheus"
	db, err := tsdb.Open(t.TempDir(), nil, reg, o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	app := isoStorage(db).Appender(context.Background())
	for i := range 5 {
		_, err := app.Append(0, labels.FromStrings("__name__", "m", "i", string(rune('a'+i))), 1000, 1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())

	base := serve(t, isoHandler(t, db, Options{Registerer: reg}))
	r := get(t, &http.Client{}, base, "/api/v1/status/tsdb", nil)
	require.Equal(t, 200, r.code, r.raw)

	mfs, err := reg.Gather()
	require.NoError(t, err)
	names := map[string]float64{}
	for _, mf := range mfs {
		if len(mf.Metric) > 0 && mf.Metric[0].Gauge != nil {
			names[mf.GetName()] = mf.Metric[0].Gauge.GetValue()
		} else {
			names[mf.GetName()] = 0
		}
	}
	for _, n := range []string{"prometheus_engine_query_duration_seconds", "prometheus_api_remote_write_invalid_labels_samples_total"} {
		require.Contains(t, names, n)
	}
	chunks, ok := names["prometheus_tsdb_head_chunks"]
	require.True(t, ok, "the DB registers prometheus_tsdb_head_chunks")
	require.NotZero(t, chunks)
	hs := r.body.(map[string]any)["data"].(map[string]any)["headStats"].(map[string]any)
	require.Equal(t, chunks, hs["chunkCount"])
	require.Equal(t, float64(5), hs["numSeries"])
}
