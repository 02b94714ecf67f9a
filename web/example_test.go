package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/web"
)

// exampleServer opens a DB in a new temporary directory, commits one
// scrape of three series into it and serves the handler over it on a test
// server. done stops the server, closes the DB and removes the directory.
func exampleServer(opts web.Options) (srv *httptest.Server, dir string, done func()) {
	dir, err := os.MkdirTemp("", "isotsdb-web-example")
	if err != nil {
		panic(err)
	}
	db, err := tsdb.Open(dir, nil, nil, nil)
	if err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	app := db.Appender(context.Background())
	for _, inst := range []string{"a:9100", "b:9100"} {
		if _, err := app.Append(0, labels.FromStrings("__name__", "up", "job", "node", "instance", inst), 1000, 1); err != nil {
			panic(err)
		}
	}
	if _, err := app.Append(0, labels.FromStrings("__name__", "node_load1", "job", "node", "instance", "a:9100"), 1000, 0.5); err != nil {
		panic(err)
	}
	if err := app.Commit(); err != nil {
		panic(err)
	}

	srv = httptest.NewServer(web.NewHandler(web.FromDB(db), opts))
	return srv, dir, func() {
		srv.Close()
		db.Close()
		os.RemoveAll(dir)
	}
}

// call sends a request without a body to srv and decodes the JSON reply
// into data, the envelope's "data" field. It returns the HTTP status and
// the envelope's "status".
func call(srv *httptest.Server, method, path string, data any) (code int, status string) {
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		panic(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	envelope := struct {
		Status string `json:"status"`
		Data   any    `json:"data"`
	}{Data: data}
	if err := json.NewDecoder(resp.Body).Decode(&envelope); err != nil {
		panic(err)
	}
	return resp.StatusCode, envelope.Status
}

// The handler is an http.Handler: mount it at the root of a server (here a
// test server). /api/v1/status/tsdb describes the head as Prometheus's
// endpoint of the same name does.
func ExampleNewHandler() {
	srv, _, done := exampleServer(web.Options{})
	defer done()

	type stat struct {
		Name  string
		Value int
	}
	var st struct {
		HeadStats struct {
			NumSeries, NumLabelPairs int
			MinTime, MaxTime         int64
		}
		SeriesCountByMetricName []stat
	}
	code, status := call(srv, http.MethodGet, "/api/v1/status/tsdb", &st)
	fmt.Println(code, status)
	fmt.Printf("head: %d series, %d label pairs, samples from %d to %d\n",
		st.HeadStats.NumSeries, st.HeadStats.NumLabelPairs, st.HeadStats.MinTime, st.HeadStats.MaxTime)
	for _, s := range st.SeriesCountByMetricName {
		fmt.Printf("%s: %d series\n", s.Name, s.Value)
	}
	// Output:
	// 200 success
	// head: 3 series, 5 label pairs, samples from 1000 to 1000
	// up: 2 series
	// node_load1: 1 series
}

// The admin endpoints answer only with Options.EnableAdmin. A snapshot goes
// into the data directory's snapshots/ directory, as in Prometheus, under
// the name the reply gives.
func ExampleNewHandler_snapshot() {
	srv, dir, done := exampleServer(web.Options{EnableAdmin: true})
	defer done()

	var snap struct{ Name string }
	code, status := call(srv, http.MethodPost, "/api/v1/admin/tsdb/snapshot", &snap)
	fmt.Println(code, status)

	copied, err := tsdb.OpenReadOnly(filepath.Join(dir, "snapshots", snap.Name), nil, nil)
	if err != nil {
		panic(err)
	}
	defer copied.Close()
	for _, b := range copied.Blocks() {
		fmt.Printf("snapshot block: %d series, %d samples\n", b.Stats.NumSeries, b.Stats.NumSamples)
	}
	// Output:
	// 200 success
	// snapshot block: 3 series, 3 samples
}
