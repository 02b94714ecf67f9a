package promweb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	ptsdb "github.com/prometheus/prometheus/tsdb"
	v1 "github.com/prometheus/prometheus/web/api/v1"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// isoOptions are the isotsdb options of the tests: no WAL (nothing is
// reopened) and 24h blocks, so no head compaction runs during a test.
func isoOptions() *tsdb.Options {
	o := tsdb.DefaultOptions()
	o.NoWAL = true
	o.NoLockfile = true
	o.MinBlockDuration = 24 * time.Hour
	o.MaxBlockDuration = 24 * time.Hour
	return o
}

// openIso opens an isotsdb DB in a temporary directory, closed at the end
// of the test.
func openIso(tb testing.TB) *tsdb.DB {
	tb.Helper()
	db, err := tsdb.Open(tb.TempDir(), nil, nil, isoOptions())
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, db.Close()) })
	return db
}

// openProm opens a Prometheus TSDB in a temporary directory, closed at
// the end of the test.
func openProm(tb testing.TB) *ptsdb.DB {
	tb.Helper()
	db, err := ptsdb.Open(tb.TempDir(), nil, nil, ptsdb.DefaultOptions(), nil)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, db.Close()) })
	return db
}

// promAdmin is v1.TSDBAdminStats over a Prometheus TSDB, as Prometheus's
// main package implements it (readyStorage).
type promAdmin struct{ db *ptsdb.DB }

func (a promAdmin) CleanTombstones() error { return a.db.CleanTombstones() }
func (a promAdmin) Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error {
	return a.db.Delete(ctx, mint, maxt, ms...)
}
func (a promAdmin) Snapshot(dir string, withHead bool) error { return a.db.Snapshot(dir, withHead) }
func (a promAdmin) Stats(name string, limit int) (*ptsdb.Stats, error) {
	return a.db.Head().Stats(name, limit), nil
}
func (a promAdmin) WALReplayStatus() (ptsdb.WALReplayStatus, error) {
	return ptsdb.WALReplayStatus{}, nil
}
func (a promAdmin) BlockMetas() ([]ptsdb.BlockMeta, error) { return a.db.BlockMetas(), nil }

var _ v1.TSDBAdminStats = promAdmin{}

// promHandler is Prometheus's API over its own TSDB, built as New builds
// isotsdb's (newHandler), with the same options.
func promHandler(tb testing.TB, db *ptsdb.DB, opts Options) http.Handler {
	tb.Helper()
	c := apiConfig{queryable: db, exemplars: db, admin: promAdmin{db}, dbDir: db.Dir(), opts: opts}
	if !opts.ReadOnly {
		c.appendable = db
	}
	h, err := newHandler(c)
	require.NoError(tb, err)
	return h
}

// isoHandler is New over db.
func isoHandler(tb testing.TB, db *tsdb.DB, opts Options) http.Handler {
	tb.Helper()
	h, err := New(db, opts)
	require.NoError(tb, err)
	return h
}

// serve starts h on a loopback httptest server, closed at the end of the
// test, and returns its URL.
func serve(tb testing.TB, h http.Handler) string {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// response is an API answer: its status code, content type and decoded
// JSON body (nil if the body is empty).
type response struct {
	code        int
	contentType string
	body        any
	raw         string
}

// get sends a GET (form empty) or a form POST to base+path.
func get(tb testing.TB, c *http.Client, base, path string, form url.Values) response {
	tb.Helper()
	var (
		resp *http.Response
		err  error
	)
	if form == nil {
		resp, err = c.Get(base + path)
	} else {
		resp, err = c.PostForm(base+path, form)
	}
	require.NoError(tb, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	r := response{code: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), raw: string(b)}
	switch {
	case strings.HasPrefix(r.contentType, "application/json"):
		require.NoError(tb, json.Unmarshal(b, &r.body), "body %q", b)
	case len(b) > 0:
		r.body = string(b)
	}
	return r
}

// floatSample is one float sample of a series.
type floatSample struct {
	t int64
	v float64
}

// testSeries is a series and its samples, as the tests write them.
type testSeries struct {
	ls      labels.Labels
	samples []floatSample
}

// staleNaN is Prometheus's stale marker.
var staleNaN = math.Float64frombits(value.StaleNaN)

// appendAll appends every sample of ss through one Appender of a and
// commits.
func appendAll(tb testing.TB, a storage.Appendable, ss []testSeries) {
	tb.Helper()
	app := a.Appender(context.Background())
	for _, s := range ss {
		var ref storage.SeriesRef
		for _, smp := range s.samples {
			var err error
			ref, err = app.Append(ref, s.ls, smp.t, smp.v)
			require.NoError(tb, err)
		}
	}
	require.NoError(tb, app.Commit())
}

// isoStorage wraps db for appendAll without taking ownership (its Close is
// never called).
func isoStorage(db *tsdb.DB) storage.Appendable { return promstorage.New(db) }

// queryValue is the value of an instant query's answer whose result is
// one sample (0 for an empty result), or the error that made it
// unreadable.
type queryValue struct {
	v   float64
	err error
}

// decodeQuery reads resp (and closes its body).
func decodeQuery(resp *http.Response) queryValue {
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return queryValue{err: fmt.Errorf("decode query answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK || body.Status != "success" {
		return queryValue{err: fmt.Errorf("query: %d %s", resp.StatusCode, body.Error)}
	}
	switch len(body.Data.Result) {
	case 0:
		return queryValue{}
	case 1:
		s, _ := body.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return queryValue{err: fmt.Errorf("query value %q: %w", s, err)}
		}
		return queryValue{v: v}
	}
	return queryValue{err: fmt.Errorf("query: %d samples, want 1", len(body.Data.Result))}
}
