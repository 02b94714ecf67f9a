package cli

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if buildDir != "" {
			_ = os.RemoveAll(buildDir)
		}
	}))
}

// seriesFile is the repository's corpus, seen from this package.
const seriesFile = "../../../testdata/20kseries.json"

// runCLI runs the command in-process and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// smallBench is the command line of a small, quick benchmark run.
func smallBench(extra ...string) []string {
	return append([]string{"bench", "write", "--series-file", seriesFile,
		"--series", "2000", "--rounds", "20", "--check-duration", "500ms"}, extra...)
}

// figure returns the number printed right after label at the start of a
// line of a report table.
func figure(t *testing.T, report, label string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(label) + ` +([0-9][0-9,.]*)`)
	m := re.FindStringSubmatch(report)
	require.NotNil(t, m, "no %q line in report:\n%s", label, report)
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	require.NoError(t, err)
	return v
}

// queryRow returns the series and samples columns of the query row whose
// first cell is what.
func queryRow(t *testing.T, report, what string) (series, samples float64) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(what) + ` +\{.*\} +([0-9,]+) +([0-9,]+) +[0-9.]+ ?[µnm]?s$`)
	m := re.FindStringSubmatch(report)
	require.NotNil(t, m, "no query row %q in report:\n%s", what, report)
	series, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	require.NoError(t, err)
	samples, err = strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
	require.NoError(t, err)
	return series, samples
}

func TestBenchWriteIsolated(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "data")
	cpuProf, memProf := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	code, report, stderr := runCLI(t, smallBench("--out", out, "--cpuprofile", cpuProf, "--memprofile", memProf,
		"--query", `{instance="host-1:9100", job="bench"}`, "--query", `{instance=~"host-[23]:.*"}`)...)
	require.Equal(t, exitOK, code, "stderr: %s\nstdout: %s", stderr, report)
	t.Log("\n" + report)

	require.Contains(t, report, "2,000 series in 4 targets of 500, 20 scrapes 15s apart, 2 writers, isolation on")
	require.Equal(t, 40000.0, figure(t, report, "samples"))
	require.Equal(t, 2000.0, figure(t, report, "series"))
	require.Greater(t, figure(t, report, "samples/s"), 0.0)
	require.Greater(t, figure(t, report, "CPU per sample"), 0.0)
	require.Greater(t, figure(t, report, "peak heap in use"), 0.0)
	require.Greater(t, figure(t, report, "heap per series"), 0.0)
	// A float sample costs at least a byte in the WAL, and far less than
	// a kilobyte.
	bps := figure(t, report, "bytes per sample")
	require.Greater(t, bps, 1.0)
	require.Less(t, bps, 1000.0)
	require.Regexp(t, `on disk +[0-9.]+ [KM]iB +wal: 1 segment; no blocks`, report)

	series, samples := queryRow(t, report, "instance")
	require.Equal(t, 500.0, series)
	require.Equal(t, 500.0*20, samples)
	series, samples = queryRow(t, report, "all series")
	require.Equal(t, 2000.0, series)
	require.Equal(t, 40000.0, samples)
	series, _ = queryRow(t, report, "metric name")
	require.Greater(t, series, 0.0)
	series, _ = queryRow(t, report, "wide regexp")
	require.Greater(t, series, 0.0)
	require.Less(t, series, 2000.0)
	require.Regexp(t, `(?m)^  --query +\{instance="host-1:9100", job="bench"\} +500 +10,000 `, report)
	require.Regexp(t, `(?m)^  --query +\{instance=~"host-\[23\]:\.\*"\} +1,000 +20,000 `, report)

	require.Greater(t, figure(t, report, "commits"), 0.0)
	require.Greater(t, figure(t, report, "reads"), 0.0)
	require.Equal(t, 0.0, figure(t, report, "partial reads"))
	require.Equal(t, 0.0, figure(t, report, "backwards reads"))
	require.Equal(t, 0.0, figure(t, report, "wrong values"))

	// --out is kept and holds the WAL; the profiles were written.
	entries, err := os.ReadDir(filepath.Join(out, "wal"))
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, p := range []string{cpuProf, memProf} {
		info, err := os.Stat(p)
		require.NoError(t, err)
		require.Greater(t, info.Size(), int64(0), p)
	}
}

// TestBenchWriteWithoutIsolation checks that the read-while-write check is
// sensitive: without isolation it must catch partial reads. Whether a read
// overlaps a commit is up to the scheduler, so a run may be retried.
func TestBenchWriteWithoutIsolation(t *testing.T) {
	const attempts = 5
	for i := 1; i <= attempts; i++ {
		code, report, stderr := runCLI(t, smallBench("--isolation=false")...)
		require.Equal(t, exitOK, code, "partial reads without isolation are no failure; stderr: %s", stderr)
		require.Contains(t, report, "isolation off")
		require.Equal(t, 0.0, figure(t, report, "backwards reads"))
		require.Equal(t, 0.0, figure(t, report, "wrong values"))
		if p := figure(t, report, "partial reads"); p > 0 {
			t.Logf("attempt %d: %v partial reads in %v reads", i, p, figure(t, report, "reads"))
			return
		}
		t.Logf("attempt %d saw no partial read", i)
	}
	require.Failf(t, "no partial read without isolation: the check is not sensitive", "%d attempts", attempts)
}

func TestBenchWriteErrors(t *testing.T) {
	nonEmpty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o644))
	short := filepath.Join(t.TempDir(), "short.json")
	require.NoError(t, os.WriteFile(short, []byte(`{"__name__":"a"}`+"\n"+`{"__name__":"b"}`+"\n"), 0o644))
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"__name__":"a"}`+"\n"+`{"__name__":1}`+"\n"), 0o644))

	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no command", nil, exitUsage, ""},
		{"unknown flag", smallBench("--nope"), exitUsage, "unknown long flag"},
		{"bad bool", smallBench("--isolation=maybe"), exitUsage, "want true or false"},
		{"bad number", smallBench("--rounds", "x"), exitUsage, "rounds"},
		{"bench only", []string{"bench"}, exitUsage, ""},
		{"zero series", []string{"bench", "write", "--series", "0"}, exitError, "--series must be at least 1"},
		{"zero writers", []string{"bench", "write", "--writers", "0"}, exitError, "--writers must be at least 1"},
		{"zero readers", []string{"bench", "write", "--readers", "0"}, exitError, "--readers must be at least 1"},
		{"zero check", []string{"bench", "write", "--check-duration", "0s"}, exitError, "--check-duration must be positive"},
		{"negative late-frac", []string{"bench", "write", "--late-frac=-0.1"}, exitError, "--late-frac must be at least 0 and below 1"},
		{"late-frac 1", []string{"bench", "write", "--late-frac", "1"}, exitError, "--late-frac must be at least 0 and below 1"},
		{"NaN late-frac", []string{"bench", "write", "--late-frac", "NaN"}, exitError, "--late-frac must be at least 0 and below 1"},
		{"negative window", []string{"bench", "write", "--ooo-window=-1m"}, exitError, "--ooo-window must not be negative"},
		{"bad window", smallBench("--ooo-window", "soon"), exitUsage, "invalid duration"},
		{"missing file", []string{"bench", "write", "--series-file", "nope.json"}, exitError, "does not exist"},
		{"bad json", []string{"bench", "write", "--series-file", bad, "--series", "2"}, exitError, "line 2"},
		{"short file", []string{"bench", "write", "--series-file", short, "--series", "10"}, exitError, "holds 2 distinct label sets"},
		{"non-empty out", smallBench("--out", nonEmpty), exitError, "is not empty"},
		{"bad query", smallBench("--query", `up{a=~"("}`), exitError, "invalid selector"},
		{"empty query", smallBench("--query", `{a=""}`), exitError, "at least one matcher"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, c.args...)
			require.Equal(t, c.code, code, "stderr: %s", stderr)
			require.Contains(t, stderr, c.stderr)
		})
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, "bench", "write", "--help")
	require.Equal(t, exitOK, code)
	for _, flag := range []string{"--out", "--series-file", "--series", "--rounds", "--writers", "--isolation=true|false",
		"--late-frac", "--ooo-window=30m", "--cpuprofile", "--memprofile"} {
		require.Contains(t, stdout, flag)
	}
}

func TestFailure(t *testing.T) {
	cases := []struct {
		r         readCheckResult
		isolation bool
		fails     bool
	}{
		{readCheckResult{}, true, false},
		{readCheckResult{partial: 1}, true, true},
		{readCheckResult{backwards: 1}, true, true},
		{readCheckResult{partial: 5, backwards: 1}, false, false},
		{readCheckResult{wrongValues: 1}, false, true},
		{readCheckResult{wrongValues: 1}, true, true},
	}
	for _, c := range cases {
		require.Equal(t, c.fails, c.r.failure(c.isolation) != "", "%+v isolation=%v", c.r, c.isolation)
	}
}

// TestCheckReader drives one reader by hand against a DB without
// isolation, committing half a scrape the way a torn read would see it.
func TestCheckReader(t *testing.T) {
	opts := tsdb.DefaultOptions()
	opts.IsolationDisabled = true
	opts.NoWAL = true
	db, err := tsdb.Open(t.TempDir(), nil, nil, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	ctx := context.Background()

	sets := make([]labels.Labels, 10)
	for i := range sets {
		sets[i] = labels.FromStrings(labels.MetricName, "m", "i", strconv.Itoa(i))
	}
	tg := newTargets(sets, 1)[0]
	const start = 1_000_000
	commit := func(k int64, from, to int, v float64) {
		t.Helper()
		app := db.Appender(ctx)
		for _, ls := range tg.series[from:to] {
			_, err := app.Append(0, ls, start+k*scrapeInterval, v)
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	rd := checkReader{db: db, sel: []*labels.Matcher{{Type: labels.MatchEqual, Name: "instance", Value: tg.instance}},
		want: len(tg.series), checkStart: start, last: noSample, seen: noSample}
	read := func() readOutcome {
		t.Helper()
		o, err := rd.read(ctx)
		require.NoError(t, err)
		return o
	}

	require.Equal(t, readOutcome{}, read(), "nothing written yet")
	commit(0, 0, 10, 0)
	require.Equal(t, readOutcome{}, read(), "whole scrape 0")
	commit(1, 0, 4, 1)
	require.Equal(t, readOutcome{partial: true}, read(), "4 of 10 series at scrape 1")
	commit(1, 4, 10, 1)
	require.Equal(t, readOutcome{}, read(), "whole scrape 1")
	commit(2, 0, 10, 7)
	require.Equal(t, readOutcome{wrongValues: 10}, read(), "scrape 2 written with value 7")

	rd.last, rd.seen = start+5*scrapeInterval, start+5*scrapeInterval
	require.Equal(t, readOutcome{backwards: true}, read(), "newest older than the last read's")
	require.Equal(t, readOutcome{}, read(), "a second empty read is not backwards again")
}

func TestWorkloadDeterministic(t *testing.T) {
	sets, err := loadLabelSets(seriesFile, 1200)
	require.NoError(t, err)
	require.Len(t, sets, 1200)
	a, b, c := newTargets(sets, 7), newTargets(sets, 7), newTargets(sets, 8)
	require.Len(t, a, 3)
	require.Len(t, a[2].series, 200)
	require.Equal(t, "host-1:9100", a[1].series[0].Get("instance"))
	require.Equal(t, benchJob, a[1].series[0].Get("job"))

	kinds := map[seriesKind]int{}
	same, differ := true, false
	for ti := range a {
		for i := range a[ti].gens {
			kinds[a[ti].gens[i].kind]++
			for range 50 {
				va, vb, vc := a[ti].gens[i].next(a[ti].rng), b[ti].gens[i].next(b[ti].rng), c[ti].gens[i].next(c[ti].rng)
				same = same && va == vb
				differ = differ || va != vc
			}
		}
	}
	require.True(t, same, "the same seed must give the same values")
	require.True(t, differ, "another seed must give other values")
	// About 20% constants, 40% counters, 40% gauges.
	require.InDelta(t, 0.2, float64(kinds[kindConstant])/1200, 0.05)
	require.InDelta(t, 0.4, float64(kinds[kindCounter])/1200, 0.05)
	require.InDelta(t, 0.4, float64(kinds[kindGauge])/1200, 0.05)
}

func TestLoadLabelSetsRepeats(t *testing.T) {
	// More series than the file holds: the file is reused, and the
	// instance label keeps the series distinct.
	sets, err := loadLabelSets(seriesFile, 20500)
	require.NoError(t, err)
	targets := newTargets(sets, 1)
	seen := map[string]bool{}
	for _, tg := range targets {
		for _, ls := range tg.series {
			require.False(t, seen[ls.String()], "duplicate series %s", ls)
			seen[ls.String()] = true
		}
	}
	require.Len(t, seen, 20500)
}

func TestValueGen(t *testing.T) {
	sets, err := loadLabelSets(seriesFile, 500)
	require.NoError(t, err)
	tg := newTargets(sets, 3)[0]
	for i := range tg.gens {
		g := &tg.gens[i]
		kind, first := g.kind, g.v
		prev := first
		for range 2000 {
			v := g.next(tg.rng)
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
			switch kind {
			case kindConstant:
				require.Equal(t, first, v)
			case kindCounter:
				require.True(t, v >= prev || v == 0, "counter went from %v to %v", prev, v)
			}
			if g.integer {
				require.Equal(t, math.Round(v), v)
			}
			prev = v
		}
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	writeTable(&b, []align{left, right, left}, [][]string{
		{"a", "1", "note"},
		{"longer", "1,000", ""},
		{"µ", "22", "x"},
	})
	require.Equal(t, ""+
		"  a           1  note\n"+
		"  longer  1,000\n"+
		"  µ          22  x\n", b.String())
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234 * time.Nanosecond:     "1.23 µs",
		1234 * time.Microsecond:    "1.23 ms",
		1234 * time.Millisecond:    "1.23s",
		12345 * time.Millisecond:   "12.3s",
		999_600 * time.Nanosecond:  "1 ms", // rounded before the unit is chosen
		999_600 * time.Microsecond: "1s",
		999 * time.Nanosecond:      "0.999 µs",
	} {
		require.Equal(t, want, formatDuration(d))
	}
}
