package web

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/isotsdb/tsdb/labels"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeDB records the calls of the handler and answers with canned data.
type fakeDB struct {
	mu        sync.Mutex // protects the fields below
	deletes   []deleteCall
	cleans    int
	snapshots []snapshotCall
	err       error // returned by Delete, CleanTombstones, Snapshot, HeadSeries
	series    []labels.Labels
}

type deleteCall struct {
	mint, maxt int64
	ms         string
}

type snapshotCall struct {
	dir      string
	withHead bool
}

func (f *fakeDB) Dir() string { return "/data" }

func (f *fakeDB) Delete(_ context.Context, mint, maxt int64, ms ...*labels.Matcher) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	var s []string
	for _, m := range ms {
		s = append(s, m.String())
	}
	f.deletes = append(f.deletes, deleteCall{mint, maxt, strings.Join(s, ",")})
	return nil
}

func (f *fakeDB) CleanTombstones(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.cleans++
	return nil
}

func (f *fakeDB) Snapshot(dir string, withHead bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.snapshots = append(f.snapshots, snapshotCall{dir, withHead})
	return nil
}

func (f *fakeDB) HeadStats() HeadStats {
	return HeadStats{NumSeries: uint64(len(f.series)), MinTime: 1000, MaxTime: 2000, ChunkCount: -1}
}

func (f *fakeDB) HeadSeries(_ context.Context, fn func(labels.Labels) error) error {
	if f.err != nil {
		return f.err
	}
	for _, ls := range f.series {
		if err := fn(ls); err != nil {
			return err
		}
	}
	return nil
}

// nothingChanged fails if the fake saw any change.
func (f *fakeDB) nothingChanged(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Empty(t, f.deletes)
	require.Empty(t, f.snapshots)
	require.Zero(t, f.cleans)
}

// envelope is Prometheus's response envelope, as a client decodes it.
type envelope struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

// call sends a request to h and returns the status and decoded envelope
// (zero for an empty body).
func call(t *testing.T, h http.Handler, method, target string, form url.Values) (int, envelope, http.Header) {
	t.Helper()
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var env envelope
	if rec.Body.Len() > 0 {
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env), rec.Body.String())
	}
	return rec.Code, env, rec.Header()
}

func requireError(t *testing.T, code int, env envelope, wantCode int, wantType, wantMsg string) {
	t.Helper()
	require.Equal(t, wantCode, code, "%+v", env)
	require.Equal(t, "error", env.Status)
	require.Equal(t, wantType, env.ErrorType)
	require.Contains(t, env.Error, wantMsg)
}

func TestSnapshot(t *testing.T) {
	nameRE := regexp.MustCompile(`^\d{8}T\d{6}Z-[0-9a-f]{16}$`)
	for _, tc := range []struct {
		method, query string
		withHead      bool
	}{
		{http.MethodPost, "", true},
		{http.MethodPut, "?skip_head=false", true},
		{http.MethodPost, "?skip_head=true", false},
		{http.MethodPost, "?skip_head=1", false},
	} {
		db := &fakeDB{}
		h := NewHandler(db, Options{EnableAdmin: true})
		code, env, _ := call(t, h, tc.method, "/api/v1/admin/tsdb/snapshot"+tc.query, nil)
		require.Equal(t, http.StatusOK, code, "%+v", env)
		require.Equal(t, "success", env.Status)
		var data struct{ Name string }
		require.NoError(t, json.Unmarshal(env.Data, &data))
		require.Regexp(t, nameRE, data.Name)
		require.Equal(t, []snapshotCall{{filepath.Join("/data", "snapshots", data.Name), tc.withHead}}, db.snapshots, tc.query)
	}

	t.Run("snapshot dir option", func(t *testing.T) {
		db := &fakeDB{}
		h := NewHandler(db, Options{EnableAdmin: true, SnapshotDir: "/snaps"})
		code, env, _ := call(t, h, http.MethodPost, "/api/v1/admin/tsdb/snapshot", nil)
		require.Equal(t, http.StatusOK, code)
		var data struct{ Name string }
		require.NoError(t, json.Unmarshal(env.Data, &data))
		require.Equal(t, filepath.Join("/snaps", data.Name), db.snapshots[0].dir)
	})

	t.Run("two snapshots get two names", func(t *testing.T) {
		db := &fakeDB{}
		h := NewHandler(db, Options{EnableAdmin: true})
		call(t, h, http.MethodPost, "/api/v1/admin/tsdb/snapshot", nil)
		call(t, h, http.MethodPost, "/api/v1/admin/tsdb/snapshot", nil)
		require.Len(t, db.snapshots, 2)
		require.NotEqual(t, db.snapshots[0].dir, db.snapshots[1].dir)
	})

	t.Run("bad skip_head", func(t *testing.T) {
		db := &fakeDB{}
		code, env, _ := call(t, NewHandler(db, Options{EnableAdmin: true}), http.MethodPost, "/api/v1/admin/tsdb/snapshot?skip_head=maybe", nil)
		requireError(t, code, env, http.StatusBadRequest, "bad_data", `invalid parameter "skip_head"`)
		db.nothingChanged(t)
	})

	t.Run("db fails", func(t *testing.T) {
		db := &fakeDB{err: errors.New("disk full")}
		code, env, _ := call(t, NewHandler(db, Options{EnableAdmin: true}), http.MethodPost, "/api/v1/admin/tsdb/snapshot", nil)
		requireError(t, code, env, http.StatusInternalServerError, "internal", "create snapshot: disk full")
	})
}

func TestDeleteSeries(t *testing.T) {
	const path = "/api/v1/admin/tsdb/delete_series"
	for _, tc := range []struct {
		name   string
		method string
		query  string
		form   url.Values
		want   []deleteCall
	}{
		{"query, defaults", http.MethodPost, "?match[]=up", nil,
			[]deleteCall{{math.MinInt64, math.MaxInt64, `__name__="up"`}}},
		{"seconds and RFC 3339", http.MethodPut, `?match[]={job="a",i=~"x.*"}&start=1.5&end=2024-01-01T00:00:00.25Z`, nil,
			[]deleteCall{{1500, 1704067200250, `job="a",i=~"x.*"`}}},
		{"two selectors", http.MethodPost, `?match[]=up&match[]={job=~"b.+"}&start=-1&end=10`, nil,
			[]deleteCall{{-1000, 10000, `__name__="up"`}, {-1000, 10000, `job=~"b.+"`}}},
		{"form body", http.MethodPost, "", url.Values{"match[]": {`up{a="1"}`}, "start": {"100"}, "end": {"100"}},
			[]deleteCall{{100000, 100000, `__name__="up",a="1"`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &fakeDB{}
			code, env, _ := call(t, NewHandler(db, Options{EnableAdmin: true}), tc.method, path+escapeQuery(tc.query), tc.form)
			require.Equal(t, http.StatusNoContent, code, "%+v", env)
			require.Equal(t, envelope{}, env, "204 has no body")
			require.Equal(t, tc.want, db.deletes)
		})
	}

	for _, tc := range []struct {
		name, query string
		msg         string
	}{
		{"no match", "?start=1", "no match[] parameter provided"},
		{"malformed selector", `?match[]=up&match[]=up{`, `invalid parameter "match[]"`},
		{"empty-matching selector", `?match[]={a=""}`, `invalid parameter "match[]"`},
		{"start after end", "?match[]=up&start=10&end=9", `invalid parameter "end"`},
		{"bad start", "?match[]=up&start=yesterday", `invalid parameter "start"`},
		{"bad end", "?match[]=up&end=NaN", `invalid parameter "end"`},
		{"end out of range", "?match[]=up&end=1e300", `invalid parameter "end"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &fakeDB{}
			code, env, _ := call(t, NewHandler(db, Options{EnableAdmin: true}), http.MethodPost, path+escapeQuery(tc.query), nil)
			requireError(t, code, env, http.StatusBadRequest, "bad_data", tc.msg)
			db.nothingChanged(t)
		})
	}

	t.Run("db fails", func(t *testing.T) {
		db := &fakeDB{err: errors.New("boom")}
		code, env, _ := call(t, NewHandler(db, Options{EnableAdmin: true}), http.MethodPost, path+"?match[]=up", nil)
		requireError(t, code, env, http.StatusInternalServerError, "internal", "boom")
	})
}

func TestCleanTombstones(t *testing.T) {
	const path = "/api/v1/admin/tsdb/clean_tombstones"
	db := &fakeDB{}
	h := NewHandler(db, Options{EnableAdmin: true})
	for _, m := range []string{http.MethodPost, http.MethodPut} {
		code, env, _ := call(t, h, m, path, nil)
		require.Equal(t, http.StatusNoContent, code, "%+v", env)
	}
	require.Equal(t, 2, db.cleans)

	db = &fakeDB{err: errors.New("boom")}
	code, env, _ := call(t, NewHandler(db, Options{EnableAdmin: true}), http.MethodPost, path, nil)
	requireError(t, code, env, http.StatusInternalServerError, "internal", "clean tombstones: boom")
}

// TestAdminDisabled: without EnableAdmin the admin endpoints answer as
// Prometheus's do (errorType "unavailable", status 500) and change nothing;
// the status endpoint still works.
func TestAdminDisabled(t *testing.T) {
	db := &fakeDB{series: []labels.Labels{labels.FromStrings("__name__", "up")}}
	h := NewHandler(db, Options{})
	for _, target := range []string{
		"/api/v1/admin/tsdb/snapshot",
		"/api/v1/admin/tsdb/delete_series?match[]=up",
		"/api/v1/admin/tsdb/clean_tombstones",
	} {
		for _, m := range []string{http.MethodPost, http.MethodPut} {
			code, env, _ := call(t, h, m, target, nil)
			requireError(t, code, env, http.StatusInternalServerError, "unavailable", "admin APIs disabled")
		}
	}
	db.nothingChanged(t)
	code, env, _ := call(t, h, http.MethodGet, "/api/v1/status/tsdb", nil)
	require.Equal(t, http.StatusOK, code, "%+v", env)
}

func TestMethodNotAllowed(t *testing.T) {
	db := &fakeDB{}
	h := NewHandler(db, Options{EnableAdmin: true})
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodGet, "/api/v1/admin/tsdb/snapshot", "POST, PUT"},
		{http.MethodDelete, "/api/v1/admin/tsdb/delete_series?match[]=up", "POST, PUT"},
		{http.MethodGet, "/api/v1/admin/tsdb/clean_tombstones", "POST, PUT"},
		{http.MethodPost, "/api/v1/status/tsdb", "GET"},
	} {
		code, env, hdr := call(t, h, tc.method, tc.path, nil)
		requireError(t, code, env, http.StatusMethodNotAllowed, "bad_data", "method "+tc.method+" not allowed")
		require.Equal(t, tc.allow, hdr.Get("Allow"))
	}
	db.nothingChanged(t)

	code, env, _ := call(t, h, http.MethodGet, "/api/v1/nope", nil)
	requireError(t, code, env, http.StatusNotFound, "not_found", "no endpoint /api/v1/nope")
}

func TestTSDBStatus(t *testing.T) {
	db := &fakeDB{}
	for i := range 12 {
		name := "up"
		if i%3 == 0 {
			name = "requests_total"
		}
		db.series = append(db.series, labels.FromStrings("__name__", name, "job", "api", "instance", "host-"+string(rune('a'+i))))
	}
	db.series = append(db.series, labels.FromStrings("__name__", "up", "job", "db", "instance", "host-a"))
	h := NewHandler(db, Options{})

	code, env, _ := call(t, h, http.MethodGet, "/api/v1/status/tsdb?limit=2", nil)
	require.Equal(t, http.StatusOK, code, "%+v", env)
	require.Equal(t, "success", env.Status)
	require.JSONEq(t, `{
		"headStats": {"numSeries": 13, "numLabelPairs": 16, "minTime": 1000, "maxTime": 2000},
		"seriesCountByMetricName": [{"name": "up", "value": 9}, {"name": "requests_total", "value": 4}],
		"labelValueCountByLabelName": [{"name": "instance", "value": 12}, {"name": "__name__", "value": 2}],
		"memoryInBytesByLabelName": [{"name": "instance", "value": 72}, {"name": "__name__", "value": 16}],
		"seriesCountByLabelValuePair": [{"name": "job=api", "value": 12}, {"name": "__name__=up", "value": 9}]
	}`, string(env.Data))

	code, env, _ = call(t, h, http.MethodGet, "/api/v1/status/tsdb", nil)
	require.Equal(t, http.StatusOK, code)
	var st tsdbStatus
	require.NoError(t, json.Unmarshal(env.Data, &st))
	require.Len(t, st.LabelValueCountByLabelName, 3)
	require.Len(t, st.SeriesCountByLabelValuePair, defaultStatusLimit)
	require.Nil(t, st.HeadStats.ChunkCount, "unknown chunk count is left out")

	for _, bad := range []string{"0", "-1", "x"} {
		code, env, _ := call(t, h, http.MethodGet, "/api/v1/status/tsdb?limit="+bad, nil)
		requireError(t, code, env, http.StatusBadRequest, "bad_data", `invalid parameter "limit"`)
	}

	empty := NewHandler(&fakeDB{}, Options{})
	code, env, _ = call(t, empty, http.MethodGet, "/api/v1/status/tsdb", nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(env.Data), `"seriesCountByMetricName":[]`, "empty lists, not null")

	failing := NewHandler(&fakeDB{err: errors.New("boom")}, Options{})
	code, env, _ = call(t, failing, http.MethodGet, "/api/v1/status/tsdb", nil)
	requireError(t, code, env, http.StatusInternalServerError, "internal", "boom")
}

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1000, true},
		{"1.5", 1500, true},
		{"1.0006", 1001, true}, // rounded to the millisecond
		{"-1.5", -1500, true},
		{"1704067200", 1704067200000, true},
		{"2024-01-01T00:00:00Z", 1704067200000, true},
		{"2024-01-01T01:00:00.123+01:00", 1704067200123, true},
		{"1e3", 1000000, true},
		{"9000000000000000", 9000000000000000000, true},
		{"9300000000000000", 0, false},
		{"-9300000000000000", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"", 0, false},
		{"2024-13-01T00:00:00Z", 0, false},
		{"tomorrow", 0, false},
	} {
		got, err := parseTime(tc.in)
		if !tc.ok {
			require.ErrorIs(t, err, ErrInvalidTime, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

// escapeQuery percent-encodes the values of a query written readably.
func escapeQuery(q string) string {
	if q == "" {
		return ""
	}
	var parts []string
	for _, kv := range strings.Split(strings.TrimPrefix(q, "?"), "&") {
		k, v, _ := strings.Cut(kv, "=")
		parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
	}
	return "?" + strings.Join(parts, "&")
}
