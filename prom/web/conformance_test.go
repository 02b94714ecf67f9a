package promweb

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"
)

// confBase is the time (ms) of the conformance data's first sample; the
// data spans an hour from it, a sample every 15 s.
const confBase = int64(1_700_000_000_000)

// confSeconds is a time of the conformance data, in the API's seconds.
func confSeconds(offsetMin int) string {
	return strconv.FormatInt(confBase/1000+int64(offsetMin)*60, 10)
}

// conformanceData is 300 series under 4 metric names and 6 label names:
// counters (with a reset), gauges, and up series of which the i9
// instances end with a stale marker 40 minutes in.
func conformanceData() []testSeries {
	var ss []testSeries
	add := func(ls labels.Labels, f func(i int) float64, staleAt int) {
		s := testSeries{ls: ls}
		for i := 0; i <= 240; i++ {
			t := confBase + int64(i)*15_000
			if staleAt > 0 && i == staleAt {
				s.samples = append(s.samples, floatSample{t, staleNaN})
				break
			}
			s.samples = append(s.samples, floatSample{t, f(i)})
		}
		ss = append(ss, s)
	}
	jobs := []string{"api", "db", "web"}
	for j, job := range jobs {
		for in := range 10 {
			inst := fmt.Sprintf("i%d", in)
			for c, code := range []string{"200", "404", "500", "503"} {
				k := float64(1 + j + in + c)
				add(labels.FromStrings("__name__", "http_requests_total", "job", job, "instance", inst, "code", code),
					func(i int) float64 {
						if in == 3 && i >= 120 { // a counter reset
							return k * float64(i-120)
						}
						return k * float64(i)
					}, 0)
			}
			for m, mode := range []string{"user", "system", "idle", "iowait"} {
				add(labels.FromStrings("__name__", "cpu_seconds_total", "job", job, "instance", inst, "mode", mode),
					func(i int) float64 { return float64(i*(m+1)) * 0.25 }, 0)
			}
			stale := 0
			if in == 9 {
				stale = 160 // 40 minutes
			}
			add(labels.FromStrings("__name__", "up", "job", job, "instance", inst),
				func(int) float64 { return 1 }, stale)
		}
	}
	for r := range 3 {
		for s := range 10 {
			add(labels.FromStrings("__name__", "temperature_celsius", "room", fmt.Sprintf("r%d", r), "sensor", fmt.Sprintf("s%d", s)),
				func(i int) float64 { return 18 + float64((i*7+s*3+r)%50)/10 }, 0)
		}
	}
	return ss
}

// unordered lists the paths (keys joined by ".") of the arrays whose order
// Prometheus does not define: they are compared as multisets.
type unordered []string

// normalize returns v with the arrays at the paths in u sorted by their
// elements' JSON.
func normalize(v any, path string, u unordered) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out[k] = normalize(e, p, u)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e, path, u)
		}
		if slices.Contains(u, path) {
			slices.SortFunc(out, func(a, b any) int {
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				return strings.Compare(string(ja), string(jb))
			})
		}
		return out
	}
	return v
}

// dataLen is the number of elements of the answer's data (its result, for
// a query): how the tests make sure two answers are not equal by being
// empty.
func dataLen(body any) int {
	m, _ := body.(map[string]any)
	d := m["data"]
	if dm, ok := d.(map[string]any); ok {
		if r, ok := dm["result"]; ok {
			d = r
		} else {
			return len(dm)
		}
	}
	switch d := d.(type) {
	case []any:
		return len(d)
	case string:
		return len(d)
	}
	return 0
}

// TestConformance sends the same requests to Prometheus's API over
// Prometheus's TSDB and to New over isotsdb, both holding the same
// samples, and compares the answers: status code, content type, and the
// JSON field by field.
func TestConformance(t *testing.T) {
	data := conformanceData()
	pdb, idb := openProm(t), openIso(t)
	appendAll(t, pdb, data)
	appendAll(t, isoStorage(idb), data)
	promURL := serve(t, promHandler(t, pdb, Options{}))
	isoURL := serve(t, isoHandler(t, idb, Options{}))

	vals := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}
	result := unordered{"data.result", "warnings", "infos"}
	statsLists := unordered{"data.seriesCountByMetricName", "data.labelValueCountByLabelName",
		"data.memoryInBytesByLabelName", "data.seriesCountByLabelValuePair"}
	cases := []struct {
		name     string
		path     string
		params   url.Values
		post     bool
		code     int
		nonEmpty bool // the answer must have data (else it is an error or empty by design)
		u        unordered
		// annotation, if set, is "infos" or "warnings": Prometheus's
		// answer must have them (so the case compares them).
		annotation string
	}{
		{name: "instant vector", path: "/api/v1/query", params: vals("query", `http_requests_total{code=~"5.."}`, "time", confSeconds(30)), code: 200, nonEmpty: true, u: result},
		{name: "instant rate sum", path: "/api/v1/query", params: vals("query", `sum by (job, code) (rate(http_requests_total[5m]))`, "time", confSeconds(45)), code: 200, nonEmpty: true, u: result},
		{name: "instant after stale markers", path: "/api/v1/query", params: vals("query", `up`, "time", confSeconds(45)), code: 200, nonEmpty: true, u: result},
		{name: "instant count", path: "/api/v1/query", params: vals("query", `count(up) + count(cpu_seconds_total)`, "time", confSeconds(39)), code: 200, nonEmpty: true, u: result},
		{name: "instant topk", path: "/api/v1/query", params: vals("query", `topk(5, temperature_celsius)`, "time", confSeconds(20)), code: 200, nonEmpty: true, u: result},
		{name: "instant resets", path: "/api/v1/query", params: vals("query", `resets(http_requests_total[1h]) > 0`, "time", confSeconds(60)), code: 200, nonEmpty: true, u: result},
		{name: "instant range vector", path: "/api/v1/query", params: vals("query", `up{instance="i9"}[3m]`, "time", confSeconds(41)), code: 200, nonEmpty: true, u: result},
		{name: "instant scalar", path: "/api/v1/query", params: vals("query", `scalar(sum(up))`, "time", confSeconds(10)), code: 200, nonEmpty: true, u: result},
		{name: "instant subquery", path: "/api/v1/query", params: vals("query", `max_over_time(rate(cpu_seconds_total{mode="idle"}[2m])[10m:])`, "time", confSeconds(50)), code: 200, nonEmpty: true, u: result},
		{name: "instant empty", path: "/api/v1/query", params: vals("query", `nonexistent_metric`, "time", confSeconds(10)), code: 200, u: result},
		{name: "instant info annotation", path: "/api/v1/query", params: vals("query", `rate(temperature_celsius[5m])`, "time", confSeconds(10)), code: 200, nonEmpty: true, u: result, annotation: "infos"},
		{name: "instant warning annotation", path: "/api/v1/query", params: vals("query", `histogram_quantile(0.9, rate(http_requests_total[5m]))`, "time", confSeconds(10)), code: 200, u: result, annotation: "warnings"},
		{name: "instant post", path: "/api/v1/query", params: vals("query", `avg(temperature_celsius) by (room)`, "time", confSeconds(59)), post: true, code: 200, nonEmpty: true, u: result},
		{name: "range rate", path: "/api/v1/query_range", params: vals("query", `rate(http_requests_total{job="api",code="200"}[5m])`, "start", confSeconds(0), "end", confSeconds(60), "step", "60"), code: 200, nonEmpty: true, u: result},
		{name: "range over stale", path: "/api/v1/query_range", params: vals("query", `count by (instance) (up)`, "start", confSeconds(30), "end", confSeconds(50), "step", "30s"), code: 200, nonEmpty: true, u: result},
		{name: "range post", path: "/api/v1/query_range", params: vals("query", `sum(cpu_seconds_total)`, "start", confSeconds(0), "end", confSeconds(60), "step", "5m"), post: true, code: 200, nonEmpty: true, u: result},
		{name: "series matchers", path: "/api/v1/series", params: vals("match[]", `up`, "match[]", `http_requests_total{job="db",code="404"}`, "start", confSeconds(0), "end", confSeconds(60)), code: 200, nonEmpty: true, u: unordered{"data"}},
		{name: "series regexp", path: "/api/v1/series", params: vals("match[]", `{__name__=~"cpu.*",mode!="idle",instance=~"i[1-3]"}`), code: 200, nonEmpty: true, u: unordered{"data"}},
		{name: "series limit", path: "/api/v1/series", params: vals("match[]", `temperature_celsius`, "limit", "7"), code: 200, nonEmpty: true, u: unordered{"data", "warnings"}, annotation: "warnings"},
		{name: "series no match", path: "/api/v1/series", code: 400},
		{name: "labels", path: "/api/v1/labels", code: 200, nonEmpty: true},
		{name: "labels matched", path: "/api/v1/labels", params: vals("match[]", `temperature_celsius`, "start", confSeconds(0), "end", confSeconds(60)), code: 200, nonEmpty: true},
		{name: "labels limit", path: "/api/v1/labels", params: vals("limit", "2"), code: 200, nonEmpty: true, u: unordered{"warnings"}, annotation: "warnings"},
		{name: "label values job", path: "/api/v1/label/job/values", code: 200, nonEmpty: true},
		{name: "label values name", path: "/api/v1/label/__name__/values", code: 200, nonEmpty: true},
		{name: "label values matched", path: "/api/v1/label/instance/values", params: vals("match[]", `up{job="web"}`), code: 200, nonEmpty: true},
		{name: "label values unknown", path: "/api/v1/label/nosuchlabel/values", code: 200},
		{name: "metadata", path: "/api/v1/metadata", code: 200},
		{name: "metadata bad limit", path: "/api/v1/metadata", params: vals("limit", "x"), code: 400},
		{name: "format query", path: "/api/v1/format_query", params: vals("query", `sum(rate(foo{bar="baz"}[5m]))by(job)`), code: 200, nonEmpty: true},
		{name: "format query bad", path: "/api/v1/format_query", params: vals("query", `sum(`), code: 400},
		{name: "bad promql", path: "/api/v1/query", params: vals("query", `sum by (job) (rate(http_requests_total[5m])`), code: 400},
		{name: "bad promql type", path: "/api/v1/query", params: vals("query", `rate(up)`), code: 400},
		{name: "bad time", path: "/api/v1/query", params: vals("query", `up`, "time", "yesterday"), code: 400},
		{name: "bad step", path: "/api/v1/query_range", params: vals("query", `up`, "start", confSeconds(0), "end", confSeconds(60), "step", "0"), code: 400},
		{name: "too many points", path: "/api/v1/query_range", params: vals("query", `up`, "start", confSeconds(0), "end", confSeconds(60), "step", "0.001"), code: 400},
		{name: "end before start", path: "/api/v1/query_range", params: vals("query", `up`, "start", confSeconds(60), "end", confSeconds(0), "step", "15"), code: 400},
		{name: "missing start", path: "/api/v1/query_range", params: vals("query", `up`, "end", confSeconds(0), "step", "15"), code: 400},
		{name: "bad timeout", path: "/api/v1/query", params: vals("query", `up`, "timeout", "soon"), code: 400},
		{name: "status tsdb", path: "/api/v1/status/tsdb", params: vals("limit", "10000"), code: 200, nonEmpty: true, u: statsLists},
		{name: "status tsdb bad limit", path: "/api/v1/status/tsdb", params: vals("limit", "0"), code: 400},
		{name: "targets", path: "/api/v1/targets", code: 200, nonEmpty: true},
		{name: "rules", path: "/api/v1/rules", code: 200, nonEmpty: true},
		{name: "alerts", path: "/api/v1/alerts", code: 200, nonEmpty: true},
		{name: "unknown endpoint", path: "/api/v1/nosuchthing", code: 404},
	}
	c := &http.Client{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			var form url.Values
			if tc.post {
				form = tc.params
			} else if tc.params != nil {
				path += "?" + tc.params.Encode()
			}
			want := get(t, c, promURL, path, form)
			got := get(t, c, isoURL, path, form)
			require.Equal(t, tc.code, want.code, "Prometheus's status (%s)", want.raw)
			require.Equal(t, want.code, got.code, "status code; isotsdb said %s", got.raw)
			require.Equal(t, want.contentType, got.contentType)
			require.Equal(t, normalize(want.body, "", tc.u), normalize(got.body, "", tc.u))
			if tc.annotation != "" {
				require.NotEmpty(t, want.body.(map[string]any)[tc.annotation], want.raw)
			}
			if tc.nonEmpty {
				require.NotZero(t, dataLen(got.body), "empty answer %s", got.raw)
			}
			if tc.code >= 400 && tc.code != 404 {
				m := got.body.(map[string]any)
				require.Equal(t, "error", m["status"])
				require.NotEmpty(t, m["error"])
			}
		})
	}
}

// TestStatusTSDBTop checks /api/v1/status/tsdb with a small limit: the
// counts of each list are Prometheus's (the entries with equal counts may
// differ, Prometheus choosing among them arbitrarily).
func TestStatusTSDBTop(t *testing.T) {
	data := conformanceData()
	pdb, idb := openProm(t), openIso(t)
	appendAll(t, pdb, data)
	appendAll(t, isoStorage(idb), data)
	c := &http.Client{}
	want := get(t, c, serve(t, promHandler(t, pdb, Options{})), "/api/v1/status/tsdb?limit=3", nil)
	got := get(t, c, serve(t, isoHandler(t, idb, Options{})), "/api/v1/status/tsdb?limit=3", nil)
	require.Equal(t, 200, want.code)
	require.Equal(t, want.code, got.code)
	wd, gd := want.body.(map[string]any)["data"].(map[string]any), got.body.(map[string]any)["data"].(map[string]any)
	require.Equal(t, wd["headStats"], gd["headStats"])
	for _, k := range []string{"seriesCountByMetricName", "labelValueCountByLabelName", "memoryInBytesByLabelName", "seriesCountByLabelValuePair"} {
		counts := func(d map[string]any) []any {
			var out []any
			for _, e := range d[k].([]any) {
				out = append(out, e.(map[string]any)["value"])
			}
			return out
		}
		require.Len(t, counts(gd), 3, k)
		require.Equal(t, counts(wd), counts(gd), k)
	}
}

// TestBuildInfo checks /api/v1/status/buildinfo: Prometheus's fields,
// isotsdb's version as the binary records it, and the Go version.
func TestBuildInfo(t *testing.T) {
	r := get(t, &http.Client{}, serve(t, isoHandler(t, openIso(t), Options{})), "/api/v1/status/buildinfo", nil)
	require.Equal(t, 200, r.code)
	d := r.body.(map[string]any)["data"].(map[string]any)
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	require.Equal(t, []string{"branch", "buildDate", "buildUser", "goVersion", "revision", "version"}, keys)
	require.Equal(t, runtime.Version(), d["goVersion"])
	bi, ok := debug.ReadBuildInfo()
	require.True(t, ok)
	// A test binary records its main module (this one, nested in
	// isotsdb's repository) and, depending on the toolchain, its
	// dependencies.
	want := bi.Main.Version
	for _, m := range bi.Deps {
		if m.Path == isotsdbModule {
			want = m.Version
		}
	}
	require.NotEmpty(t, want)
	require.NotEqual(t, "unknown", d["version"])
	require.Equal(t, want, d["version"])
}
