package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	config_util "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage/remote"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/cmd/tsdb/cli"
	"github.com/isotsdb/tsdb/labels"
)

// server is a Serve running in the background.
type server struct {
	base string // http://addr
	stop context.CancelFunc
	done chan error
}

// start runs Serve with c on a loopback listener until the test ends or
// stop is called.
func start(t *testing.T, c Config) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c.Listener = ln
	ready := make(chan net.Addr, 1)
	c.Ready = func(a net.Addr) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stop: cancel, done: make(chan error, 1)}
	go func() { s.done <- Serve(ctx, c) }()
	select {
	case a := <-ready:
		s.base = "http://" + a.String()
	case err := <-s.done:
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	return s
}

// shutdown stops the server and returns what Serve returned.
func (s *server) shutdown() error {
	s.stop()
	err := <-s.done
	s.done <- err // for the cleanup
	return err
}

// get fetches path and returns the status code and body.
func (s *server) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(s.base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// query runs an instant PromQL query at ts and returns the vector's
// values by series (the labels' JSON).
func (s *server) query(t *testing.T, q string, ts int64) map[string]string {
	t.Helper()
	code, body := s.get(t, "/api/v1/query?query="+url.QueryEscape(q)+"&time="+strconv.FormatFloat(float64(ts)/1000, 'f', 3, 64))
	require.Equal(t, http.StatusOK, code, body)
	var r struct {
		Status string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	require.Equal(t, "success", r.Status)
	out := map[string]string{}
	for _, v := range r.Data.Result {
		k, _ := json.Marshal(v.Metric)
		out[string(k)] = v.Value[1].(string)
	}
	return out
}

// writeRequest is two series of three samples, 15 s apart from t0.
func writeRequest(t0 int64) *prompb.WriteRequest {
	req := &prompb.WriteRequest{}
	for i, job := range []string{"a", "b"} {
		ts := prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "up"}, {Name: "job", Value: job}}}
		for k := range 3 {
			ts.Samples = append(ts.Samples, prompb.Sample{Timestamp: t0 + int64(k)*15_000, Value: float64(10*i + k)})
		}
		req.Timeseries = append(req.Timeseries, ts)
	}
	return req
}

// remoteWrite sends req with Prometheus's own remote-write client.
func remoteWrite(t *testing.T, base string, req *prompb.WriteRequest) error {
	t.Helper()
	u, err := url.Parse(base + "/api/v1/write")
	require.NoError(t, err)
	c, err := remote.NewWriteClient("test", &remote.ClientConfig{
		URL:     &config_util.URL{URL: u},
		Timeout: model.Duration(10 * time.Second),
	})
	require.NoError(t, err)
	b, err := req.Marshal()
	require.NoError(t, err)
	_, err = c.Store(context.Background(), snappy.Encode(nil, b), 0)
	return err
}

// TestServeWriteQueryMetrics: Prometheus's remote-write client writes into
// a served directory; the API answers queries over it, /metrics shows the
// database's and Go's metrics, and after the shutdown the directory holds
// the samples (the database was closed: the lock is free).
func TestServeWriteQueryMetrics(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Config{Dir: dir})
	t0 := time.Now().Add(-time.Minute).UnixMilli()
	require.NoError(t, remoteWrite(t, s.base, writeRequest(t0)))

	got := s.query(t, "up", t0+30_000)
	require.Equal(t, map[string]string{
		`{"__name__":"up","job":"a"}`: "2",
		`{"__name__":"up","job":"b"}`: "12",
	}, got)
	require.Equal(t, map[string]string{`{}`: "36"}, s.query(t, "sum(sum_over_time(up[1m]))", t0+30_000))

	code, body := s.get(t, "/api/v1/labels")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"success","data":["__name__","job"]}`, body)

	code, body = s.get(t, "/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "\ntsdb_head_series 2\n")
	require.Contains(t, body, "\ngo_goroutines ")
	require.Contains(t, body, "\nprometheus_engine_queries ") // the API's engine

	// A request the receiver refuses leaves nothing: a sample out of
	// order after an accepted one of the same request.
	bad := writeRequest(t0 + 60_000)
	bad.Timeseries[1].Samples[2].Timestamp = t0
	err := remoteWrite(t, s.base, bad)
	require.Error(t, err)
	require.Contains(t, err.Error(), "400")
	require.Len(t, s.query(t, "up", t0+90_000), 2)
	require.Equal(t, map[string]string{`{}`: "6"}, s.query(t, "sum(count_over_time(up[10m]))", t0+120_000))

	require.NoError(t, s.shutdown())
	db, err := tsdb.Open(dir, nil, nil, nil)
	require.NoError(t, err)
	defer db.Close()
	q, err := db.Querier(t0, t0+30_000)
	require.NoError(t, err)
	defer q.Close()
	ss := q.Select(context.Background(), labels.MustNewMatcher(labels.MatchEqual, "__name__", "up"))
	n := 0
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() != 0 {
			n++
		}
	}
	require.NoError(t, ss.Err())
	require.Equal(t, 6, n)
}

// TestServeReadOnly: --read-only serves a directory another process has
// open, answers queries, and refuses writes (404) and admin requests.
func TestServeReadOnly(t *testing.T) {
	dir := t.TempDir()
	db, err := tsdb.Open(dir, nil, nil, nil)
	require.NoError(t, err)
	defer db.Close()
	t0 := time.Now().Add(-time.Minute).UnixMilli()
	app := db.Appender(context.Background())
	_, err = app.Append(0, labels.FromStrings("__name__", "up", "job", "a"), t0, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	s := start(t, Config{Dir: dir, ReadOnly: true})
	require.Equal(t, map[string]string{`{"__name__":"up","job":"a"}`: "1"}, s.query(t, "up", t0))

	err = remoteWrite(t, s.base, writeRequest(t0+15_000))
	require.Error(t, err)
	require.Contains(t, err.Error(), "404")

	resp, err := http.Post(s.base+"/api/v1/admin/tsdb/delete_series?match[]=up", "", bytes.NewReader(nil))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NotEqual(t, http.StatusNoContent, resp.StatusCode)
	require.Contains(t, string(b), `"errorType":"unavailable"`)
	require.NoError(t, s.shutdown())

	// The writer's data is untouched.
	q, err := db.Querier(t0, t0)
	require.NoError(t, err)
	defer q.Close()
	require.True(t, q.Select(context.Background(), labels.MustNewMatcher(labels.MatchEqual, "job", "a")).Next())
}

// TestServeCommand runs the command through the tool: bad command lines
// are usage errors (2), a directory that cannot be served fails (1) with
// the reason, and an interrupt shuts a running server down cleanly (0).
func TestServeCommand(t *testing.T) {
	run := func(ctx context.Context, args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(ctx, args, &out, &errOut, Command())
		return code, errOut.String()
	}
	code, _ := run(context.Background(), "serve")
	require.Equal(t, 2, code, "no directory")
	code, _ = run(context.Background(), "serve", t.TempDir(), "--retention", "soon")
	require.Equal(t, 2, code, "bad retention")

	code, stderr := run(context.Background(), "serve", t.TempDir(), "--read-only", "--listen", "127.0.0.1:0")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "not a TSDB")

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	dir := t.TempDir()
	code, stderr = run(ctx, "serve", dir, "--listen", "127.0.0.1:0", "--retention", "2d")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.Contains(stderr, "serving"), stderr)
	db, err := tsdb.Open(dir, nil, nil, nil)
	require.NoError(t, err, "the server closed the directory")
	require.NoError(t, db.Close())
}
