package cli

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// histDB returns a copy of testdata/histdb, a block written by
// Prometheus's tsdb holding integer, float, gauge and custom-bucket
// histograms (with stale markers and counter resets), a float series with
// special values, and a series that is a float first and a histogram
// later; and the lines of testdata/histdb.dump, what Prometheus's reader
// and notation (promtool tsdb dump's) make of it. See testdata/genhist.
func histDB(t *testing.T) (dir string, dump []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "histdb"))))
	b, err := os.ReadFile(filepath.Join("testdata", "histdb.dump"))
	require.NoError(t, err)
	dump = strings.SplitAfter(string(b), "\n")
	require.Empty(t, dump[len(dump)-1], "the dump ends with a newline")
	return dir, dump[:len(dump)-1]
}

// linesWithPrefix returns the lines that start with prefix.
func linesWithPrefix(lines []string, prefix string) string {
	var b strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestHistogramInspect runs dump, check and analyze on the histogram block.
func TestHistogramInspect(t *testing.T) {
	dir, dump := histDB(t)
	before := treeDigest(t, dir)

	t.Run("ls", func(t *testing.T) {
		code, out, stderr := runCLI(t, "ls", dir)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, "HISTOGRAMS")
		require.Regexp(t, `(?m)^  \S{26}  .* +72 +54 +15 +`, out, "72 samples, 54 of them histograms, in 15 chunks")
	})

	t.Run("dump", func(t *testing.T) {
		code, out, stderr := runCLI(t, "dump", dir, "--stale-as-nan")
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, strings.Join(dump, ""), out, "the notation of promtool tsdb dump")
	})

	t.Run("dump stale", func(t *testing.T) {
		// promtool prints the markers as NaN; dump prints "stale" instead,
		// and nothing else changes. The block holds the histogram markers
		// of four series at 00:01:15, and up's float marker at 00:02:00,
		// after a measured NaN at 00:01:45 that must stay "NaN".
		code, out, stderr := runCLI(t, "dump", dir)
		require.Equal(t, exitOK, code, stderr)
		want := strings.Join(dump, "")
		n := strings.Count(want, "} {count:0, sum:NaN} 1704067275000\n")
		require.Equal(t, 4, n, "histogram stale markers in the promtool dump")
		want = strings.ReplaceAll(want, "} {count:0, sum:NaN} 1704067275000\n", "} stale 1704067275000\n")
		const nan, marker = `{__name__="up", job="api"} NaN 1704067305000` + "\n", `{__name__="up", job="api"} NaN 1704067320000` + "\n"
		require.Contains(t, want, nan)
		require.Contains(t, want, marker)
		want = strings.Replace(want, marker, `{__name__="up", job="api"} stale 1704067320000`+"\n", 1)
		require.Equal(t, want, out)
		require.Equal(t, 5, strings.Count(out, " stale "))
		require.Contains(t, out, nan, "a measured NaN is not a marker")
	})

	t.Run("dump match", func(t *testing.T) {
		for _, sel := range []string{
			`rpc_duration_seconds{job="db"}`, // float histograms
			`request_size_bytes`,             // custom buckets
			`mixed`,                          // floats, then histograms
		} {
			ms, err := labels.ParseSelector(sel)
			require.NoError(t, err)
			code, out, stderr := runCLI(t, "dump", dir, "--match", sel, "--stale-as-nan")
			require.Equal(t, exitOK, code, stderr)
			prefix := "{" + ms[0].Name + "=\"" + ms[0].Value + "\""
			if len(ms) > 1 {
				prefix += ", " + ms[1].Name + "=\"" + ms[1].Value + "\""
			}
			want := linesWithPrefix(dump, prefix)
			require.NotEmpty(t, want, sel)
			require.Equal(t, want, out, sel)
		}
	})

	t.Run("dump time range", func(t *testing.T) {
		// The stale markers are at 00:01:15, the counter resets at 00:02:00.
		code, out, stderr := runCLI(t, "dump", dir, "--min-time", "2024-01-01T00:01:15Z", "--max-time", "2024-01-01T00:01:15Z", "--stale-as-nan")
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, strings.Join(filterSuffix(dump, " 1704067275000\n"), ""), out)
		require.Contains(t, out, `{__name__="rpc_duration_seconds", job="api"} {count:0, sum:NaN} 1704067275000`)
		require.Contains(t, out, `{__name__="up", job="api"} +Inf 1704067275000`)
		code, out, stderr = runCLI(t, "dump", dir, "--min-time", "2024-01-01T00:01:15Z", "--max-time", "2024-01-01T00:01:15Z")
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, `{__name__="rpc_duration_seconds", job="api"} stale 1704067275000`)
		require.NotContains(t, out, "NaN")
	})

	t.Run("check", func(t *testing.T) {
		code, out, stderr := runCLI(t, "check", dir)
		require.Equal(t, exitOK, code, "%s\n%s", out, stderr)
		require.Contains(t, out, "6 series, 15 chunks (13 histogram), 72 samples (54 histogram), 0 tombstones\n")
		require.Contains(t, out, "OK: 0 errors, 0 warnings\n")
	})

	t.Run("analyze", func(t *testing.T) {
		code, out, stderr := runCLI(t, "analyze", dir)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, "Series: 6\n"+
			"Series with float samples: 2, with native histogram samples: 5\n"+
			"Chunks: 15 (float: 2, histogram: 13)\n"+
			"Samples: 72 (float: 18, histogram: 54)\n")
	})

	require.Equal(t, before, treeDigest(t, dir), "the inspection commands changed the directory")
}

// filterSuffix returns the lines that end with suffix.
func filterSuffix(lines []string, suffix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasSuffix(l, suffix) {
			out = append(out, l)
		}
	}
	return out
}

// TestHistogramCheckDamage damages a histogram chunk of the histogram block
// and checks that tsdb check fails naming the file and offset.
func TestHistogramCheckDamage(t *testing.T) {
	dir, _ := histDB(t)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	seg := filepath.Join(dir, ents[0].Name(), "chunks", "000001")
	// The first record of the file is the float chunk of "mixed", the
	// second its histogram chunk: damage the data of that one.
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	n, k := binary.Uvarint(b[8:])
	second := 8 + k + 1 + int(n) + 4
	flipByte(t, seg, second+4)
	code, out, _ := runCLI(t, "check", dir)
	require.Equal(t, exitError, code, out)
	require.Contains(t, out, fmt.Sprintf("chunks/000001 at offset %d, series {__name__=\"mixed\", job=\"api\"}: chunk 1 (ref %d) does not read", second, second))
	require.Contains(t, out, "checksum")
	require.Contains(t, out, "FAILED: ")
}

// TestHistogramReads runs the sample reads of bench write (its query
// timing and its read-while-write check) over histogram series, which
// they must count, or count as wrong values, without panicking.
func TestHistogramReads(t *testing.T) {
	dir, dump := histDB(t)
	db, err := tsdb.OpenReadOnly(dir, nil, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	ctx := context.Background()

	all := []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")}
	series, samples, err := selectAll(ctx, db, math.MinInt64, math.MaxInt64, all)
	require.NoError(t, err)
	require.Equal(t, 6, series)
	require.Equal(t, int64(len(dump)), samples)

	rd := checkReader{db: db, sel: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "db")},
		want: 1, checkStart: 1704067200000, last: noSample, seen: noSample}
	o, err := rd.read(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), o.wrongValues, "the newest sample is a histogram, not the value the check wrote")
}

// TestCardinalityCounts checks the sample type lines of the analyze
// report: a block's report counts chunks, the head's cannot.
func TestCardinalityCounts(t *testing.T) {
	c := newCardinality("Head", 0, 2000)
	c.add(labels.FromStrings("a", "1"), 0, 1999)
	c.addCounts(sampleCounts{floatSamples: 1200})
	c.add(labels.FromStrings("a", "2"), 0, 1999)
	c.addCounts(sampleCounts{floatSamples: 3, histSamples: 4})
	var b strings.Builder
	c.write(&b, 1)
	require.Contains(t, b.String(), "Series: 2\nSeries with float samples: 2, with native histogram samples: 1\n"+
		"Samples: 1,207 (float: 1,203, histogram: 4)\nLabel names: 1\n")

	c.chunksKnown = true
	c.addCounts(sampleCounts{floatChunks: 10, histChunks: 2})
	b.Reset()
	c.write(&b, 1)
	require.Contains(t, b.String(), "Chunks: 12 (float: 10, histogram: 2)\nSamples: 1,207")
}
