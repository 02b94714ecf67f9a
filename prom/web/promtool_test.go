package promweb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/prom/serve"
	promweb "github.com/isotsdb/tsdb/prom/web"
)

// prometheusModule is the module promtool comes from. prom/go.mod has
// promtool as a tool dependency (its tool directive), so `go tool`
// builds it from the module's go.sum at the Prometheus version the module
// pins.
const prometheusModule = "github.com/prometheus/prometheus"

// buildPromtool builds promtool with `go tool -n promtool`, which caches
// the executable in the build cache (a later run neither compiles nor
// links it again) and prints its path, and returns that path. The build
// is an ordinary one (no race detector, whatever the test's own build):
// promtool is the client under test, not our code. It checks that the
// binary was built from the Prometheus module version prom/go.mod pins.
func buildPromtool(t *testing.T) string {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("go", "tool", "-n", "promtool")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go tool -n promtool: %s", stderr.String())
	t.Logf("go tool -n promtool: %v", time.Since(start).Round(time.Millisecond))
	bin := strings.TrimSpace(string(out))
	require.FileExists(t, bin)

	out, err = exec.Command("go", "list", "-m", "-f", "{{.Version}}", prometheusModule).CombinedOutput()
	require.NoError(t, err, "go list -m %s: %s", prometheusModule, out)
	pinned := strings.TrimSpace(string(out))
	require.NotEmpty(t, pinned)
	out, err = exec.Command("go", "version", "-m", bin).CombinedOutput()
	require.NoError(t, err, "go version -m: %s", out)
	// A tool built from a dependency records that module as its main
	// module ("mod").
	want := "\tmod\t" + prometheusModule + "\t" + pinned + "\t"
	require.True(t, strings.Contains(string(out), want), "promtool's build info has no %q", want)
	return bin
}

// serveIso opens an isotsdb directory, has fill write into it, closes it,
// and serves the directory with serve.Serve (what `tsdb serve DIR` runs) on
// a loopback port until the test ends; it returns the server's URL. The
// samples reach the server through the WAL's replay.
func serveIso(t *testing.T, fill func(db *tsdb.DB)) string {
	t.Helper()
	dir := t.TempDir()
	opts := tsdb.DefaultOptions()
	db, err := tsdb.Open(dir, nil, nil, opts)
	require.NoError(t, err)
	fill(db)
	require.NoError(t, db.Close())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		done <- serve.Serve(ctx, serve.Config{Dir: dir, Listener: ln, DB: opts, Ready: func(a net.Addr) { ready <- a }})
	}()
	select {
	case a := <-ready:
		t.Cleanup(func() {
			cancel()
			require.NoError(t, <-done)
		})
		return "http://" + a.String()
	case err := <-done:
		cancel()
		t.Fatalf("serve.Serve: %v", err)
		return ""
	}
}

// promtoolRun is how one promtool run ended.
type promtoolRun struct {
	code           int // exit code
	stdout, stderr string
}

// runPromtool runs bin with args, at most a minute.
func runPromtool(t *testing.T, bin string, args ...string) promtoolRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := promtoolRun{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.Exited():
		r.code = exit.ExitCode()
	default:
		require.NoError(t, err, "promtool %q: %s", args, r.stderr)
	}
	return r
}

// outputKind is what a promtool query prints, which says how to parse its
// JSON output.
type outputKind int

const (
	vectorOut outputKind = iota // query instant, a vector
	matrixOut                   // query instant of a range vector, or query range
	scalarOut                   // query instant of a scalar
	seriesOut                   // query series
	valuesOut                   // query labels (the values of one label)
)

// parseJSON decodes promtool's -o json output as kind, into the client
// library's model types, and puts the elements whose order Prometheus's
// API does not define (vector and matrix results, series) in a canonical
// order. Label values stay in the server's order: the API sorts them. n
// is the number of elements, so that callers can tell an empty answer.
func parseJSON(t *testing.T, kind outputKind, out string) (v any, n int) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	decode := func(v any) {
		require.NoError(t, dec.Decode(v), "promtool's output %q", out)
		require.False(t, dec.More(), "more than one JSON value in %q", out)
	}
	switch kind {
	case vectorOut:
		var vec model.Vector
		decode(&vec)
		slices.SortFunc(vec, func(a, b *model.Sample) int { return strings.Compare(a.Metric.String(), b.Metric.String()) })
		return vec, len(vec)
	case matrixOut:
		var m model.Matrix
		decode(&m)
		slices.SortFunc(m, func(a, b *model.SampleStream) int { return strings.Compare(a.Metric.String(), b.Metric.String()) })
		return m, len(m)
	case scalarOut:
		var s model.Scalar
		decode(&s)
		return s, 1
	case seriesOut:
		var ss []model.LabelSet
		decode(&ss)
		slices.SortFunc(ss, func(a, b model.LabelSet) int { return strings.Compare(a.String(), b.String()) })
		return ss, len(ss)
	case valuesOut:
		var vs model.LabelValues
		decode(&vs)
		return vs, len(vs)
	}
	t.Fatalf("unknown output kind %d", kind)
	return nil, 0
}

// sortedLines is promtool's text output as a sorted list of its lines:
// the order of a result's series is not defined.
func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// TestPromtool runs Prometheus's promtool (`promtool query instant`,
// `range`, `series` and `labels`) against `tsdb serve` over isotsdb and
// against Prometheus's own API over a Prometheus TSDB holding the same
// samples. For each query the exit codes and stderr are equal, the JSON
// output (-o json) parsed into Prometheus's client model is equal (the
// order of series aside), and so is the text output (its lines sorted).
// Queries that must find data do on both sides; bad ones fail on both with
// the same message.
func TestPromtool(t *testing.T) {
	bin := buildPromtool(t)
	data := promweb.ConformanceData()
	pdb := promweb.OpenProm(t)
	promweb.AppendAll(t, pdb, data)
	promURL := promweb.Serve(t, promweb.PromHandler(t, pdb, promweb.Options{}))
	isoURL := serveIso(t, func(db *tsdb.DB) { promweb.AppendAll(t, promweb.IsoStorage(db), data) })

	at := func(min int) string { return "--time=" + promweb.ConfSeconds(min) }
	span := []string{"--start=" + promweb.ConfSeconds(0), "--end=" + promweb.ConfSeconds(60)}
	with := func(args []string, more ...string) []string { return append(slices.Clone(args), more...) }
	cases := []struct {
		name string
		sub  string   // promtool query's subcommand
		args []string // after the server's URL
		kind outputKind
		// nonEmpty: the answer must hold data; fail: promtool must fail
		// (exit code 1, a "query error" on stderr, nothing on stdout).
		nonEmpty, fail bool
	}{
		{name: "instant vector", sub: "instant", args: []string{`http_requests_total{code=~"5.."}`, at(30)}, kind: vectorOut, nonEmpty: true},
		{name: "instant rate sum", sub: "instant", args: []string{`sum by (job, code) (rate(http_requests_total[5m]))`, at(45)}, kind: vectorOut, nonEmpty: true},
		{name: "instant after stale markers", sub: "instant", args: []string{`up`, at(45)}, kind: vectorOut, nonEmpty: true},
		{name: "instant topk", sub: "instant", args: []string{`topk(5, temperature_celsius)`, at(20)}, kind: vectorOut, nonEmpty: true},
		{name: "instant counter reset", sub: "instant", args: []string{`resets(http_requests_total[1h]) > 0`, at(60)}, kind: vectorOut, nonEmpty: true},
		{name: "instant range vector", sub: "instant", args: []string{`up{instance="i9"}[3m]`, at(41)}, kind: matrixOut, nonEmpty: true},
		{name: "instant scalar", sub: "instant", args: []string{`scalar(sum(up))`, at(10)}, kind: scalarOut, nonEmpty: true},
		{name: "instant empty", sub: "instant", args: []string{`nonexistent_metric`, at(10)}, kind: vectorOut},
		{name: "instant bad promql", sub: "instant", args: []string{`sum by (job) (rate(http_requests_total[5m])`, at(10)}, fail: true},
		{name: "instant bad type", sub: "instant", args: []string{`rate(up)`, at(10)}, fail: true},
		{name: "range rate", sub: "range", args: with(span, `rate(http_requests_total{job="api",code="200"}[5m])`, "--step=1m"), kind: matrixOut, nonEmpty: true},
		{name: "range over stale markers", sub: "range", args: []string{`count by (instance) (up)`, "--start=" + promweb.ConfSeconds(30), "--end=" + promweb.ConfSeconds(50), "--step=30s"}, kind: matrixOut, nonEmpty: true},
		{name: "range default step", sub: "range", args: with(span, `sum(cpu_seconds_total)`), kind: matrixOut, nonEmpty: true},
		{name: "range bad promql", sub: "range", args: with(span, `sum(`, "--step=1m"), fail: true},
		{name: "series matchers", sub: "series", args: with(span, "--match=up", `--match=http_requests_total{job="db",code="404"}`), kind: seriesOut, nonEmpty: true},
		{name: "series regexp", sub: "series", args: with(span, `--match={__name__=~"cpu.*",mode!="idle",instance=~"i[1-3]"}`), kind: seriesOut, nonEmpty: true},
		{name: "series none", sub: "series", args: with(span, "--match=nonexistent_metric"), kind: seriesOut},
		{name: "series bad matcher", sub: "series", args: with(span, "--match={"), fail: true},
		{name: "labels metric names", sub: "labels", args: with(span, "__name__"), kind: valuesOut, nonEmpty: true},
		{name: "labels values", sub: "labels", args: with(span, "job"), kind: valuesOut, nonEmpty: true},
		{name: "labels values matched", sub: "labels", args: with(span, "instance", `--match=up{job="web"}`), kind: valuesOut, nonEmpty: true},
		{name: "labels unknown", sub: "labels", args: with(span, "nosuchlabel"), kind: valuesOut},
		{name: "labels bad matcher", sub: "labels", args: with(span, "job", "--match=up{"), fail: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{"json", "promql"} {
				query := func(server string) promtoolRun {
					return runPromtool(t, bin, append([]string{"query", "-o", format, tc.sub, server}, tc.args...)...)
				}
				want, got := query(promURL), query(isoURL)
				require.Equal(t, want.code, got.code, "exit code (%s); isotsdb's stderr %q", format, got.stderr)
				require.Equal(t, want.stderr, got.stderr, "stderr (%s)", format)
				if tc.fail {
					require.Equal(t, 1, want.code, "Prometheus's exit code (%s)", format)
					require.Contains(t, want.stderr, "query error", format)
					require.Empty(t, got.stdout, format)
					continue
				}
				require.Zero(t, want.code, "Prometheus's exit code (%s), stderr %q", format, want.stderr)
				if format == "promql" {
					require.Equal(t, sortedLines(want.stdout), sortedLines(got.stdout), "text output")
					continue
				}
				wantV, n := parseJSON(t, tc.kind, want.stdout)
				gotV, _ := parseJSON(t, tc.kind, got.stdout)
				require.Equal(t, wantV, gotV, "parsed output")
				if tc.nonEmpty {
					require.NotZero(t, n, "Prometheus's answer is empty: %s", want.stdout)
				} else {
					require.Zero(t, n, "Prometheus's answer: %s", want.stdout)
				}
			}
		})
	}
}
