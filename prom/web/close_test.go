package promweb

import (
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

// TestAfterClose: once the DB is closed, every endpoint that reads or
// writes it answers with an error status, and none panics.
func TestAfterClose(t *testing.T) {
	db, err := tsdb.Open(t.TempDir(), nil, nil, isoOptions())
	require.NoError(t, err)
	h := isoHandler(t, db, Options{})
	body := encodeWrite(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		promTS(labels.FromStrings("__name__", "m", "a", "1"), floatSample{t: 1000, v: 1}),
	}})
	code, msg := post(h, body, rwHeader)
	require.Equal(t, http.StatusNoContent, code, msg)
	require.NoError(t, db.Close())

	base := serve(t, h)
	c := &http.Client{}
	for _, path := range []string{
		"/api/v1/query?query=m&time=1",
		"/api/v1/query_range?query=m&start=0&end=10&step=1",
		"/api/v1/series?match[]=m&start=0&end=10",
		"/api/v1/labels?start=0&end=10",
		"/api/v1/label/a/values?start=0&end=10",
		"/api/v1/status/tsdb",
	} {
		r := get(t, c, base, path, nil)
		require.GreaterOrEqual(t, r.code, 400, "%s after Close: %s", path, r.raw)
	}
	r := get(t, c, base, "/api/v1/admin/tsdb/delete_series", url.Values{"match[]": {"m"}})
	require.GreaterOrEqual(t, r.code, 400, "delete_series after Close: %s", r.raw)
	r = get(t, c, base, "/api/v1/admin/tsdb/snapshot", url.Values{})
	require.GreaterOrEqual(t, r.code, 400, "snapshot after Close: %s", r.raw)
	code, msg = post(h, body, rwHeader)
	require.GreaterOrEqual(t, code, 400, "write after Close: %s", msg)
}

// TestCloseRacingRequests: the DB closes while queries and writes run
// through the handler (run with -race); every request answers with
// success or an error status, and none panics.
func TestCloseRacingRequests(t *testing.T) {
	db, err := tsdb.Open(t.TempDir(), nil, nil, isoOptions())
	require.NoError(t, err)
	h := isoHandler(t, db, Options{})
	base := serve(t, h)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Go(func() {
			c := &http.Client{}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if w == 0 {
					body := encodeWrite(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
						promTS(labels.FromStrings("__name__", "m", "w", "0"), floatSample{t: int64(i+1) * 1000, v: float64(i)}),
					}})
					code, msg := post(h, body, rwHeader)
					if code != http.StatusNoContent && code < 400 {
						t.Errorf("write: status %d: %s", code, msg)
					}
					continue
				}
				r := get(t, c, base, "/api/v1/query?query=count(m)&time=1000", nil)
				if r.code != http.StatusOK && r.code < 400 {
					t.Errorf("query: status %d: %s", r.code, r.raw)
				}
			}
		})
	}
	// Let both run a while, then close under them.
	c := &http.Client{}
	for range 50 {
		get(t, c, base, "/api/v1/query?query=count(m)&time=1000", nil)
	}
	require.NoError(t, db.Close())
	for range 50 {
		get(t, c, base, "/api/v1/query?query=count(m)&time=1000", nil)
	}
	close(stop)
	wg.Wait()
}
