package promweb

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAdmin runs the admin endpoints on Prometheus's API over its TSDB
// and on New's over isotsdb, both holding the same samples: the same
// status codes, and the same answers to the queries that follow.
func TestAdmin(t *testing.T) {
	data := conformanceData()
	pdb, idb := openProm(t), openIso(t)
	appendAll(t, pdb, data)
	appendAll(t, isoStorage(idb), data)
	promURL, isoURL := serve(t, promHandler(t, pdb, Options{})), serve(t, isoHandler(t, idb, Options{}))
	c := &http.Client{}
	both := func(path string, form url.Values) (response, response) {
		t.Helper()
		want, got := get(t, c, promURL, path, form), get(t, c, isoURL, path, form)
		require.Equal(t, want.code, got.code, "%s: Prometheus %s; isotsdb %s", path, want.raw, got.raw)
		return want, got
	}
	same := func(path string, u unordered) {
		t.Helper()
		want, got := both(path, nil)
		require.Equal(t, 200, got.code, got.raw)
		require.NotZero(t, dataLen(got.body), got.raw)
		require.Equal(t, normalize(want.body, "", u), normalize(got.body, "", u), path)
	}
	rangeUp := "/api/v1/query_range?" + url.Values{"query": {`up{job="api"}`}, "start": {confSeconds(0)}, "end": {confSeconds(60)}, "step": {"60"}}.Encode()

	del := url.Values{"match[]": {`up{job="api",instance=~"i[0-4]"}`}, "start": {confSeconds(10)}, "end": {confSeconds(20)}}
	want, _ := both("/api/v1/admin/tsdb/delete_series", del)
	require.Equal(t, http.StatusNoContent, want.code, want.raw)
	same(rangeUp, unordered{"data.result"})
	same("/api/v1/series?"+url.Values{"match[]": {`up`}}.Encode(), unordered{"data"})

	// All of some series.
	want, _ = both("/api/v1/admin/tsdb/delete_series", url.Values{"match[]": {`cpu_seconds_total{mode="iowait"}`}})
	require.Equal(t, http.StatusNoContent, want.code, want.raw)
	same("/api/v1/query?"+url.Values{"query": {`count(cpu_seconds_total)`}, "time": {confSeconds(30)}}.Encode(), unordered{"data.result"})
	// A difference: Prometheus's head keeps the label values of series
	// whose samples are all deleted (until its head garbage-collects
	// them); isotsdb lists the values of series with samples a query can
	// see. The answer is Prometheus's without the deleted value.
	want, got := both("/api/v1/label/mode/values", nil)
	wantVals := want.body.(map[string]any)["data"].([]any)
	require.Contains(t, wantVals, "iowait")
	want.body.(map[string]any)["data"] = slices.DeleteFunc(slices.Clone(wantVals), func(v any) bool { return v == "iowait" })
	require.Equal(t, want.body, got.body)

	for _, bad := range []url.Values{
		{},                                     // no match[]
		{"match[]": {`up{`}},                   // bad selector
		{"match[]": {`up`}, "start": {"soon"}}, // bad time
	} {
		want, _ := both("/api/v1/admin/tsdb/delete_series", bad)
		require.Equal(t, http.StatusBadRequest, want.code, want.raw)
	}

	want, _ = both("/api/v1/admin/tsdb/clean_tombstones", url.Values{})
	require.Equal(t, http.StatusNoContent, want.code, want.raw)
	same(rangeUp, unordered{"data.result"})

	want, got = both("/api/v1/admin/tsdb/snapshot", url.Values{})
	require.Equal(t, http.StatusOK, want.code, want.raw)
	name, _ := got.body.(map[string]any)["data"].(map[string]any)["name"].(string)
	require.NotEmpty(t, name, got.raw)
	fi, err := os.Stat(filepath.Join(idb.Dir(), "snapshots", name))
	require.NoError(t, err)
	require.True(t, fi.IsDir())
}
