package cli

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

const (
	// inspectBase is the first sample's time of the inspection test DB:
	// 2024-01-01T00:00:00Z.
	inspectBase = int64(1704067200000)
	// inspectStep is its scrape interval.
	inspectStep = int64(15000)
	// inspectRounds scrapes span 3 hours.
	inspectRounds = 3 * 3600 * 1000 / inspectStep
	// batchFrom and batchTo bound the rounds in which the churning series
	// batch_jobs exists: from 1h05m to 1h25m.
	batchFrom, batchTo = 65 * 60 * 1000 / inspectStep, 85 * 60 * 1000 / inspectStep
)

// writeInspectDB writes the database the inspection commands are tested
// on into a new directory: up and requests_total for 10 instances every
// 15 s for 3 h (the value of round k is k), a churning series batch_jobs
// for 20 minutes in the middle, 10-minute blocks compacted, a deletion
// for instance host-3, and then 300 series for 4 minutes that stay in the
// head and fill a few 32 KiB WAL segments.
func writeInspectDB(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	opts := tsdb.DefaultOptions()
	opts.MinBlockDuration = 10 * time.Minute
	opts.WALSegmentSize = 32 << 10
	db, err := tsdb.Open(dir, nil, nil, opts)
	require.NoError(t, err)
	ctx := context.Background()
	for k := range inspectRounds {
		app := db.Appender(ctx)
		for i := range 10 {
			for _, name := range []string{"up", "requests_total"} {
				_, err := app.Append(0, labels.FromStrings("__name__", name, "job", "api", "instance", fmt.Sprintf("host-%d", i)),
					inspectBase+k*inspectStep, float64(k))
				require.NoError(t, err)
			}
		}
		if k >= batchFrom && k < batchTo {
			_, err := app.Append(0, labels.FromStrings("__name__", "batch_jobs", "job", "batch", "instance", "host-0"),
				inspectBase+k*inspectStep, 1)
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.NoError(t, db.Delete(ctx, inspectBase, inspectBase+60*60*1000, labels.MustNewMatcher(labels.MatchEqual, "instance", "host-3")))
	end := inspectBase + inspectRounds*inspectStep
	for k := range 4 * 60 * 1000 / inspectStep {
		app := db.Appender(ctx)
		for i := range 300 {
			_, err := app.Append(0, labels.FromStrings("__name__", "tail", "job", "tail", "instance", fmt.Sprintf("tail-%d", i)),
				end+k*inspectStep, float64(k))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Close())
	return dir
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

// tsdbBinary builds the command once per test process into a temporary
// directory that TestMain removes at the end (so -count=N reuses it).
func tsdbBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "tsdb-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "tsdb")
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the test builds the command and needs the go command: %w", err)
			return
		}
		out, err := exec.Command(goBin, "build", "-o", binPath, "..").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// runBin runs the built command and returns its exit code and output.
func runBin(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(tsdbBinary(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	require.NoError(t, err)
	return 0, out.String(), errOut.String()
}

// TestInspectCommands builds the command and runs ls, analyze, dump and
// check on one database, then check on damaged copies of it.
func TestInspectCommands(t *testing.T) {
	dir := writeInspectDB(t)
	before := treeDigest(t, dir)
	blocks := blockDirs(t, dir)
	require.GreaterOrEqual(t, len(blocks), 2)

	t.Run("ls", func(t *testing.T) {
		code, out, stderr := runBin(t, "ls", dir)
		require.Equal(t, exitOK, code, stderr)
		t.Log("\n" + out)
		require.Contains(t, out, "BLOCK ULID")
		for _, b := range blocks {
			require.Regexp(t, `(?m)^  `+b+`  2024-01-01T\d\d:\d\d:00Z  2024-01-01T\d\d:\d\d:00Z +\S+ +(20|21) +[\d,]+ +0 +[\d,]+ +[\d.]+ (B|KiB) +\d$`, out)
		}
		// The head keeps the last 10 minutes of the 20 series (a block
		// range is cut once the head spans 1.5 ranges) and the 300 more.
		require.Contains(t, out, "head: 320 series, 2024-01-01T02:50:00Z to 2024-01-01T03:03:45Z (13m45s)")
		require.Regexp(t, `WAL:  \d+ segments \(\d{8} to \d{8}, [\d.]+ KiB\), checkpoint\.\d{8} \(`, out)
	})

	t.Run("analyze newest block", func(t *testing.T) {
		code, out, stderr := runBin(t, "analyze", dir)
		require.Equal(t, exitOK, code, stderr)
		newest := blocks[len(blocks)-1]
		require.Contains(t, out, "Block ID: "+newest)
		require.Contains(t, out, "Series: 20\n")
		require.Contains(t, out, "Label names: 3\n")
		require.Contains(t, out, "Postings (unique label pairs): 13\n") // 2 names, 1 job, 10 instances
		require.Contains(t, out, "Postings entries (total label pairs): 60\n")
		require.Contains(t, out, "Highest cardinality labels (label names by number of values):\n10  instance\n 2  __name__\n 1  job\n")
		require.Contains(t, out, "Highest cardinality metric names (series per metric name):\n10  requests_total\n10  up\n")
		require.Contains(t, out, "Churn: 0 of 20 series")
	})

	t.Run("analyze churn", func(t *testing.T) {
		b := blockHolding(t, dir, inspectBase+batchFrom*inspectStep)
		code, out, stderr := runBin(t, "analyze", dir, b, "--limit", "2")
		require.Equal(t, exitOK, code, stderr)
		t.Log("\n" + out)
		require.Contains(t, out, "Block ID: "+b)
		require.Contains(t, out, "Series: 21\n")
		require.Regexp(t, `Churn: [12] of 21 series`, out) // batch_jobs, and host-3 if its deletion is in this block
		require.Contains(t, out, "Label pairs most involved in churning:\n")
		require.Contains(t, out, "__name__=batch_jobs")
		require.Contains(t, out, "Most common label pairs (series per label pair):\n20  job=api\n10  __name__=requests_total\n\n")
	})

	t.Run("analyze head", func(t *testing.T) {
		code, out, stderr := runBin(t, "analyze", dir, "head", "--limit", "1")
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, "Head\nTime range: 2024-01-01T02:50:00Z to 2024-01-01T03:03:45Z, first to last sample (13m45s)\n")
		require.Contains(t, out, "Series: 320\n")
		// Every series starts or ends inside: the 20 end at 03:00, the
		// 300 start then.
		require.Contains(t, out, "Churn: 320 of 320 series (100.0%)")
		require.Contains(t, out, "Highest cardinality labels (label names by number of values):\n310  instance\n\n")
	})

	t.Run("analyze unknown block", func(t *testing.T) {
		code, _, stderr := runBin(t, "analyze", dir, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
		require.Equal(t, exitError, code)
		require.Contains(t, stderr, "no block 01ARZ3NDEKTSV4RRFFQ69G5FAV")
	})

	t.Run("dump", func(t *testing.T) {
		from, to := inspectBase+100*inspectStep, inspectBase+102*inspectStep
		code, out, stderr := runBin(t, "dump", dir, "--match", `up{instance="host-1"}`,
			"--min-time", "2024-01-01T00:25:00Z", "--max-time", fmt.Sprint(to))
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, fmt.Sprintf(`{__name__="up", instance="host-1", job="api"} 100 %d
{__name__="up", instance="host-1", job="api"} 101 %d
{__name__="up", instance="host-1", job="api"} 102 %d
`, from, from+inspectStep, to), out)
	})

	t.Run("dump union", func(t *testing.T) {
		at := inspectBase + 200*inspectStep
		code, out, stderr := runBin(t, "dump", dir, "--match", `up{instance="host-1"}`, "--match", `{instance="host-1"}`,
			"--min-time", fmt.Sprint(at), "--max-time", fmt.Sprint(at))
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, fmt.Sprintf(`{__name__="requests_total", instance="host-1", job="api"} 200 %[1]d
{__name__="up", instance="host-1", job="api"} 200 %[1]d
`, at), out)
	})

	t.Run("dump everything", func(t *testing.T) {
		code, out, stderr := runBin(t, "dump", dir)
		require.Equal(t, exitOK, code, stderr)
		lines := strings.Count(out, "\n")
		// 20 series for 3 h, minus host-3's first hour (2 series), plus
		// batch_jobs and the head's 300 series for 4 minutes.
		want := 20*inspectRounds - 2*(60*60*1000/inspectStep+1) + (batchTo - batchFrom) + 300*(4*60*1000/inspectStep)
		require.Equal(t, int(want), lines)
	})

	t.Run("dump bad selector", func(t *testing.T) {
		code, _, stderr := runBin(t, "dump", dir, "--match", `up{`)
		require.Equal(t, exitUsage, code)
		require.Contains(t, stderr, "invalid selector")
	})

	t.Run("check", func(t *testing.T) {
		code, out, stderr := runBin(t, "check", dir)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", out, stderr)
		t.Log("\n" + out)
		require.Contains(t, out, "OK: 0 errors")
		for _, b := range blocks {
			require.Contains(t, out, "block "+b+"  2024-01-01T")
		}
		require.Regexp(t, `WAL: checkpoint\.\d{8}, segments \d{8} to \d{8}: [\d,]+ records`, out)
	})

	t.Run("read-only", func(t *testing.T) {
		require.Equal(t, before, treeDigest(t, dir), "the commands changed the data directory")
	})

	t.Run("check damage", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			damage func(t *testing.T, dir string) string // returns the damaged file
			want   string
		}{
			{"index", func(t *testing.T, dir string) string {
				return flipByte(t, filepath.Join(dir, blocks[0], "index"), 5+8+1)
			}, "index does not open"},
			{"chunks", func(t *testing.T, dir string) string {
				return flipByte(t, filepath.Join(dir, blocks[0], "chunks", "000001"), 8+4)
			}, "checksum"},
			{"meta.json", func(t *testing.T, dir string) string {
				p := filepath.Join(dir, blocks[0], "meta.json")
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				i := bytes.Index(b, []byte(`"version"`))
				require.Positive(t, i)
				return flipByte(t, p, i+2)
			}, "version 0, want 1"},
			{"tombstones", func(t *testing.T, dir string) string {
				return flipByte(t, filepath.Join(dir, blocks[0], "tombstones"), 0)
			}, "tombstones do not decode"},
			{"wal segment", func(t *testing.T, dir string) string {
				segs := walSegmentFiles(t, dir)
				require.GreaterOrEqual(t, len(segs), 2)
				return flipByte(t, segs[len(segs)-2], 7+2)
			}, "followed by valid records"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				cp := filepath.Join(t.TempDir(), "copy")
				require.NoError(t, os.CopyFS(cp, os.DirFS(dir)))
				file := tc.damage(t, cp)
				code, out, stderr := runBin(t, "check", cp)
				require.Equal(t, exitError, code, "stdout: %s\nstderr: %s", out, stderr)
				require.Regexp(t, `(?m)^error: `+regexp.QuoteMeta(file)+`\b.*`+regexp.QuoteMeta(tc.want), out)
				require.Contains(t, out, "FAILED: ")
			})
		}
	})

	t.Run("not a TSDB", func(t *testing.T) {
		empty := t.TempDir()
		missing := filepath.Join(empty, "missing")
		for _, args := range [][]string{
			{"ls", empty}, {"analyze", empty}, {"dump", empty}, {"check", empty},
			{"ls", missing}, {"analyze", missing}, {"dump", missing}, {"check", missing},
		} {
			code, out, stderr := runBin(t, args...)
			require.Equal(t, exitError, code, "%v: %s", args, stderr)
			require.Contains(t, stderr, "not a TSDB data directory", args)
			require.Empty(t, out, args)
		}
		ents, err := os.ReadDir(empty)
		require.NoError(t, err)
		require.Empty(t, ents, "nothing created")
	})

	t.Run("while open", func(t *testing.T) {
		cp := filepath.Join(t.TempDir(), "copy")
		require.NoError(t, os.CopyFS(cp, os.DirFS(dir)))
		opts := tsdb.DefaultOptions()
		opts.MinBlockDuration = 10 * time.Minute
		db, err := tsdb.Open(cp, nil, nil, opts) // holds the lock
		require.NoError(t, err)
		defer func() { require.NoError(t, db.Close()) }()
		code, out, stderr := runBin(t, "ls", cp)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, "head: 320 series")
	})
}

// TestInspectInProcess covers argument handling without the binary.
func TestInspectInProcess(t *testing.T) {
	code, _, stderr := runCLI(t, "analyze", t.TempDir(), "--limit", "0")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "--limit must be at least 1")

	code, _, stderr = runCLI(t, "dump", t.TempDir(), "--min-time", "5", "--max-time", "4")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "after --max-time")

	code, _, stderr = runCLI(t, "dump", t.TempDir(), "--min-time", "yesterday")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "RFC 3339")

	code, _, _ = runCLI(t, "ls")
	require.Equal(t, exitUsage, code, "the directory is required")

	code, _, _ = runCLI(t)
	require.Equal(t, exitUsage, code, "no command")
	code, stdout, _ := runCLI(t, "--help")
	require.Equal(t, exitOK, code, "--help succeeds")
	for _, c := range []string{"ls <dir>", "analyze [<flags>] <dir> [<block>]", "dump [<flags>] <dir>", "check <dir>"} {
		require.Contains(t, stdout, "\n"+c+"\n")
	}
}

func TestTimeValue(t *testing.T) {
	var ms int64
	v := timeValue{&ms}
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"-5", -5, true},
		{"1704067200123", 1704067200123, true},
		{"2024-01-01T00:00:00Z", 1704067200000, true},
		{"2024-01-01T01:00:00.5+01:00", 1704067200500, true},
		{"1.5", 0, false},
		{"", 0, false},
	} {
		err := v.Set(tc.in)
		if !tc.ok {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, ms, tc.in)
		require.Equal(t, fmt.Sprint(tc.want), v.String())
	}
}

func TestCardinalityChurn(t *testing.T) {
	c := newCardinality("x", 0, 2000) // tolerance 100
	c.add(labels.FromStrings("a", "1"), 50, 1950)
	c.add(labels.FromStrings("a", "2"), 150, 1999) // starts late
	c.add(labels.FromStrings("a", "3"), 0, 1850)   // ends early
	require.Equal(t, 3, c.series)
	require.Equal(t, 2, c.churned)
	require.Equal(t, map[string]int{"a": 2}, c.churnNames)
	var b strings.Builder
	c.write(&b, 2)
	require.Contains(t, b.String(), "Churn: 2 of 3 series (66.7%) start or end more than 100ms inside the time range")
	require.Contains(t, b.String(), "Label pairs most involved in churning:\n1  a=2\n1  a=3\n")
	require.Contains(t, b.String(), "Most common label pairs (series per label pair):\n1  a=1\n1  a=2\n\n")

	var empty strings.Builder
	newCardinality("Head", 0, 0).write(&empty, 5)
	require.Equal(t, "Head\nNo series.\n", empty.String())
}

// blockDirs returns the names of the block directories of dir, by ULID.
func blockDirs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if _, err := ulid.ParseStrict(e.Name()); err == nil {
			out = append(out, e.Name())
		}
	}
	// Blocks of one DB do not overlap: time order is meta order.
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Compare(blockMeta(t, dir, a).MinTime, blockMeta(t, dir, b).MinTime)
	})
	return out
}

func blockMeta(t *testing.T, dir, name string) tsdb.BlockMeta {
	t.Helper()
	m, err := readBlockMeta(filepath.Join(dir, name))
	require.NoError(t, err)
	return m
}

// blockHolding returns the block whose range holds ts.
func blockHolding(t *testing.T, dir string, ts int64) string {
	t.Helper()
	for _, b := range blockDirs(t, dir) {
		if m := blockMeta(t, dir, b); m.MinTime <= ts && ts < m.MaxTime {
			return b
		}
	}
	require.Failf(t, "no block holds the timestamp", "%d", ts)
	return ""
}

func walSegmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "wal"))
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if !e.IsDir() && len(e.Name()) == 8 {
			out = append(out, filepath.Join(dir, "wal", e.Name()))
		}
	}
	return out
}

// flipByte inverts the byte at off of the file and returns its path.
func flipByte(t *testing.T, path string, off int) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Less(t, off, len(b))
	b[off] ^= 0xff
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

// treeDigest hashes the names, sizes, modification times and contents of
// every file under dir.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}
