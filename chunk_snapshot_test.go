package tsdb

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
	"github.com/isotsdb/tsdb/vfs"
)

// snapOptions are the options of the snapshot tests: snapshots on, late
// samples and exemplars on, one-hour chunks so that a short workload
// cuts several per series.
func snapOptions(fsys vfs.FS) *Options {
	o := DefaultOptions()
	o.FS = fsys
	o.SnapshotOnShutdown = true
	o.OutOfOrderTimeWindow = 2 * time.Hour
	o.MaxExemplars = 1000
	o.MinBlockDuration = 2 * time.Hour
	o.MaxBlockDuration = 2 * time.Hour
	return o
}

// snapWorkload writes, from step k0 on (n steps, 60 s apart), series of
// every kind: plain floats, floats with start times, integer and float
// histograms, a series switching between floats and histograms (closed
// histogram chunks stay in the heap), late samples, a stale marker,
// exemplars, metadata, and a deletion. With kinds false only plain floats
// (the case Prometheus restores exactly).
func snapWorkload(t testing.TB, db *DB, k0, n int, kinds bool) {
	snapWorkloadN(t, db, k0, n, 20, kinds)
}

// snapWorkloadN is snapWorkload with floats float series (at least 4).
func snapWorkloadN(t testing.TB, db *DB, k0, n, floats int, kinds bool) {
	t.Helper()
	for k := k0; k < k0+n; k++ {
		ts := int64(k) * 60_000
		app := db.Appender(ctx)
		for i := range floats {
			l := labels.FromStrings(labels.MetricName, "snap_float", "i", fmt.Sprint(i))
			_, err := app.Append(0, l, ts, float64(k*i)+0.25)
			require.NoError(t, err)
			if k%50 == 0 {
				_, err = app.AppendExemplar(0, l, Exemplar{Labels: labels.FromStrings("trace", fmt.Sprint(k, i)), Value: float64(k), Ts: ts, HasTs: true})
				require.NoError(t, err)
			}
		}
		_, err := app.UpdateMetadata(0, labels.FromStrings(labels.MetricName, "snap_float", "i", "3"), Metadata{Type: MetricTypeGauge, Unit: "s", Help: fmt.Sprint("help ", k/100)})
		require.NoError(t, err)
		if kinds {
			_, err = app.AppendST(0, labels.FromStrings(labels.MetricName, "snap_st"), ts-30_000, ts, float64(k), nil, nil)
			require.NoError(t, err)
			_, err = app.AppendHistogram(0, labels.FromStrings(labels.MetricName, "snap_h"), ts, crashHistogram(k), nil)
			require.NoError(t, err)
			_, err = app.AppendHistogram(0, labels.FromStrings(labels.MetricName, "snap_fh"), ts, nil, crashHistogram(k).ToFloat())
			require.NoError(t, err)
			mixed := labels.FromStrings(labels.MetricName, "snap_mixed")
			if (k/40)%2 == 0 {
				_, err = app.Append(0, mixed, ts, float64(k))
			} else {
				_, err = app.AppendHistogram(0, mixed, ts, crashHistogram(k), nil)
			}
			require.NoError(t, err)
			if k%7 == 3 && k > 30 {
				// Late: half an hour back, between the float series' samples.
				_, err = app.Append(0, labels.FromStrings(labels.MetricName, "snap_float", "i", "1"), ts-30*60_000+1, -float64(k))
				require.NoError(t, err)
			}
			if k == k0+n-1 {
				_, err = app.Append(0, labels.FromStrings(labels.MetricName, "snap_float", "i", fmt.Sprint(floats-1)), ts+1, math.Float64frombits(value.StaleNaN))
				require.NoError(t, err)
			}
		}
		require.NoError(t, app.Commit())
	}
	// Head compaction, which the commits may have started in the
	// background, done before the state is read.
	require.NoError(t, db.Compact(ctx))
	if kinds {
		mint := int64(k0+n/3) * 60_000
		require.NoError(t, db.Delete(ctx, mint, mint+10*60_000, labels.MustNewMatcher(labels.MatchEqual, "i", "2")))
	}
}

// snapState renders everything a reader can see of db: every sample with
// its kind, start time and exact value, label names and values, metadata,
// exemplars, and the head's series count and time range.
// Exemplars only with withExemplars: a WAL replay does not bring back
// those before the last checkpoint (checkpoints keep no exemplars, as in
// Prometheus), which the snapshot keeps.
func snapState(t *testing.T, db *DB, withExemplars bool) string {
	t.Helper()
	var b strings.Builder
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	ss := q.Select(ctx)
	for ss.Next() {
		s := ss.At()
		fmt.Fprintf(&b, "%s\n", s.Labels())
		it := s.Iterator(nil)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			switch vt {
			case chunks.ValFloat:
				ts, v := it.At()
				fmt.Fprintf(&b, " %d/%d F %x\n", ts, it.AtST(), math.Float64bits(v))
			case chunks.ValHistogram:
				ts, h := it.AtHistogram(nil)
				fmt.Fprintf(&b, " %d/%d H %s\n", ts, it.AtST(), h)
			default:
				ts, fh := it.AtFloatHistogram(nil)
				fmt.Fprintf(&b, " %d/%d FH %s\n", ts, it.AtST(), fh)
			}
		}
		require.NoError(t, it.Err())
		m, ok, err := q.SeriesMetadata(s.Labels())
		require.NoError(t, err)
		if ok {
			fmt.Fprintf(&b, " meta %+v\n", m)
		}
	}
	require.NoError(t, ss.Err())
	names, err := q.LabelNames(ctx)
	require.NoError(t, err)
	for _, n := range names {
		vs, err := q.LabelValues(ctx, n)
		require.NoError(t, err)
		fmt.Fprintf(&b, "label %s: %v\n", n, vs)
	}
	var res []ExemplarQueryResult
	eq, err := db.ExemplarQuerier(ctx)
	require.NoError(t, err)
	res, err = eq.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")})
	require.NoError(t, err)
	for _, r := range res {
		if !withExemplars {
			break
		}
		// Without HasTs, which neither the WAL nor Prometheus's snapshot
		// keeps (every exemplar the WAL replays has a time).
		fmt.Fprintf(&b, "exemplars %s:", r.SeriesLabels)
		for _, e := range r.Exemplars {
			fmt.Fprintf(&b, " %s %x@%d", e.Labels, math.Float64bits(e.Value), e.Ts)
		}
		b.WriteString("\n")
	}
	hv := db.Head()
	fmt.Fprintf(&b, "head series %d [%d, %d]\n", hv.NumSeries(), hv.MinTime(), hv.MaxTime())
	return b.String()
}

// snapDirs returns the chunk snapshot directories (and temporary ones) in
// the data directory.
func snapDirs(t testing.TB, fsys vfs.FS) []string {
	t.Helper()
	ents, err := fsys.ReadDir("data")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), chunkSnapshotPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// reopen closes db and opens the directory again with o, and reports
// whether the head came from a snapshot.
func reopen(t *testing.T, db *DB, o *Options) (*DB, bool) {
	t.Helper()
	require.NoError(t, db.Close())
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	require.Empty(t, snapDirs(t, o.FS), "Open leaves no snapshot behind")
	return db, counterValue(t, db.walMetrics.snapshotLoads) == 1
}

// TestChunkSnapshotRoundTrip: after Close and Open with a snapshot, the DB
// reads exactly as before (samples of every kind, late ones, deletions,
// labels, metadata, exemplars, head range), without a WAL replay; appends
// continue; later restarts with and without a snapshot read the same.
func TestChunkSnapshotRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kinds     bool
		promExact bool
	}{
		{"floats", false, true},
		{"every kind", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			o := snapOptions(fsys)
			db, err := Open("data", nil, nil, o)
			require.NoError(t, err)
			snapWorkload(t, db, 0, 300, tc.kinds)
			wantEx := snapState(t, db, true)

			require.NoError(t, db.Close())
			dirs := snapDirs(t, fsys)
			require.Len(t, dirs, 1)
			cs, err := readChunkSnapshot(fsys, filepath.Join("data", dirs[0]))
			require.NoError(t, err)
			require.Equal(t, tc.promExact, cs.promExact)
			db, err = Open("data", nil, nil, o)
			require.NoError(t, err)
			require.Equal(t, 1.0, counterValue(t, db.walMetrics.snapshotLoads), "head restored from the snapshot")
			require.Zero(t, counterValue(t, db.walMetrics.snapshotErrors))
			require.Empty(t, snapDirs(t, fsys))
			require.Equal(t, wantEx, snapState(t, db, true))
			require.NoError(t, db.head.checkInvariants(true))

			// Appends continue where they stopped.
			snapWorkload(t, db, 300, 100, tc.kinds)
			want, wantEx := snapState(t, db, false), snapState(t, db, true)
			db, used := reopen(t, db, o)
			require.True(t, used)
			require.Equal(t, wantEx, snapState(t, db, true))

			// Without the option: the WAL replay reads the same.
			off := *o
			off.SnapshotOnShutdown = false
			db, used = reopen(t, db, &off)
			require.False(t, used)
			require.Equal(t, want, snapState(t, db, false))
			// And the snapshot it did not write is not there to use.
			db, used = reopen(t, db, o)
			require.False(t, used)
			require.Equal(t, want, snapState(t, db, false))
			db, used = reopen(t, db, o)
			require.True(t, used)
			require.Equal(t, want, snapState(t, db, false))
			require.NoError(t, db.Close())
		})
	}
}

// snapFixture is a closed DB with a snapshot: its filesystem, options, the
// state before Close (samples, labels, metadata; no exemplars) and the
// snapshot's directory.
type snapFixture struct {
	fsys *vfs.MemFS
	o    *Options
	want string
	dir  string
}

// newSnapFixture writes a small workload of every kind (each commit
// synced, so that a crash loses none) and closes the DB.
func newSnapFixture(t *testing.T) snapFixture {
	t.Helper()
	fsys := vfs.NewMemFS()
	o := snapOptions(fsys)
	o.WALSyncEveryCommit = true
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	snapWorkloadN(t, db, 0, 90, 4, true)
	want := snapState(t, db, false)
	require.NoError(t, db.Close())
	dirs := snapDirs(t, fsys)
	require.Len(t, dirs, 1)
	return snapFixture{fsys: fsys, o: o, want: want, dir: filepath.Join("data", dirs[0])}
}

// openOn opens a copy of fsys with f's options, checks that it reads as
// before and leaves no snapshot behind, and reports whether it used one.
func (f snapFixture) openOn(t *testing.T, fsys *vfs.MemFS) bool {
	t.Helper()
	o := *f.o
	o.FS = fsys
	o.SnapshotOnShutdown = false // nothing more to write
	o.WALSyncEveryCommit = false
	reg := prometheus.NewRegistry()
	o2 := o
	o2.SnapshotOnShutdown = true
	db, err := Open("data", nil, reg, &o2)
	require.NoError(t, err)
	db.opts.SnapshotOnShutdown = false
	require.Empty(t, snapDirs(t, fsys))
	require.Equal(t, f.want, snapState(t, db, false))
	used := counterValue(t, db.walMetrics.snapshotLoads) == 1
	require.NoError(t, db.Close())
	return used
}

// dataEnd returns the length of b without its trailing zero bytes (the
// padding of a log's last page).
func dataEnd(b []byte) int {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

// TestChunkSnapshotDamaged: a snapshot torn at any byte, with any byte
// changed, or missing a file, is not used, and Open loses nothing.
func TestChunkSnapshotDamaged(t *testing.T) {
	f := newSnapFixture(t)
	require.True(t, f.openOn(t, f.fsys.Crash()), "the undamaged snapshot is used")
	for _, file := range []string{
		filepath.Join(f.dir, "00000000"),
		filepath.Join(f.dir, chunkSnapshotExtraDir, "00000000"),
	} {
		data, err := f.fsys.ReadFile(file)
		require.NoError(t, err)
		end := dataEnd(data)
		require.Positive(t, end)
		t.Run("torn "+file, func(t *testing.T) {
			for n := 0; n < end; n++ {
				c := f.fsys.Crash()
				require.NoError(t, c.WriteFile(file, data[:n], 0o666))
				c.SyncAll()
				require.False(t, f.openOn(t, c), "snapshot torn at %d of %d used", n, end)
			}
		})
		t.Run("garbage "+file, func(t *testing.T) {
			for n := 0; n < end; n += 7 {
				c := f.fsys.Crash()
				bad := append([]byte(nil), data...)
				bad[n] ^= 0x5a
				require.NoError(t, c.WriteFile(file, bad, 0o666))
				c.SyncAll()
				require.False(t, f.openOn(t, c), "snapshot with byte %d changed used", n)
			}
		})
		t.Run("missing "+file, func(t *testing.T) {
			c := f.fsys.Crash()
			require.NoError(t, c.Remove(file))
			c.SyncAll()
			require.False(t, f.openOn(t, c))
		})
	}
	t.Run("missing extra dir", func(t *testing.T) {
		c := f.fsys.Crash()
		require.NoError(t, c.RemoveAll(filepath.Join(f.dir, chunkSnapshotExtraDir)))
		c.SyncAll()
		require.False(t, f.openOn(t, c))
	})
	t.Run("missing head chunk file", func(t *testing.T) {
		c := f.fsys.Crash()
		ents, err := c.ReadDir(filepath.Join("data", headChunksDir))
		require.NoError(t, err)
		require.NotEmpty(t, ents)
		require.NoError(t, c.Remove(filepath.Join("data", headChunksDir, ents[0].Name())))
		c.SyncAll()
		require.False(t, f.openOn(t, c))
	})
}

// TestChunkSnapshotStale: a snapshot that the WAL has moved past (the DB
// was opened without the option, took writes, and closed without a
// snapshot, then the old snapshot came back) is not used.
func TestChunkSnapshotStale(t *testing.T) {
	f := newSnapFixture(t)
	var files []string
	require.NoError(t, walkMem(f.fsys, f.dir, &files))
	saved := map[string][]byte{}
	for _, name := range files {
		b, err := f.fsys.ReadFile(name)
		require.NoError(t, err)
		saved[name] = b
	}
	for _, tc := range []struct {
		name  string
		steps int
	}{
		{"no write", 0},
		{"writes", 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := f.fsys.Crash()
			o := *f.o
			o.FS = c
			db, err := Open("data", nil, nil, &o)
			require.NoError(t, err)
			if tc.steps > 0 {
				snapWorkloadN(t, db, 90, tc.steps, 4, true)
			}
			g := f
			g.want = snapState(t, db, false)
			db.opts.SnapshotOnShutdown = false
			require.NoError(t, db.Close())
			for name, b := range saved {
				require.NoError(t, c.MkdirAll(filepath.Dir(name), 0o777))
				require.NoError(t, c.WriteFile(name, b, 0o666))
			}
			c.SyncAll()
			// Open's new WAL segment stays empty without writes: the
			// old snapshot still matches the WAL's end then, and the
			// head it restores is the same.
			require.Equal(t, tc.steps == 0, g.openOn(t, c))
		})
	}
}

// walkMem appends the files below dir to out.
func walkMem(fsys *vfs.MemFS, dir string, out *[]string) error {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if err := walkMem(fsys, p, out); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, p)
	}
	return nil
}

// TestChunkSnapshotCrashDuringClose: a crash at any point of a Close that
// writes a snapshot (a temporary directory left, a rename not synced)
// loses nothing, and a later Open leaves no snapshot directory behind.
func TestChunkSnapshotCrashDuringClose(t *testing.T) {
	run := func(k int) (*vfs.MemFS, string, int) {
		fsys := vfs.NewMemFS()
		o := snapOptions(fsys)
		o.WALSyncEveryCommit = true
		db, err := Open("data", nil, nil, o)
		require.NoError(t, err)
		snapWorkload(t, db, 0, 60, true)
		want := snapState(t, db, false)
		ops := fsys.Ops()
		fsys.CrashAfter(k)
		require.NoError(t, db.Close())
		return fsys, want, fsys.Ops() - ops
	}
	_, _, total := run(-1)
	require.Greater(t, total, 10)
	usedAny := false
	for k := 0; k <= total; k++ {
		fsys, want, _ := run(k)
		f := snapFixture{o: snapOptions(nil), want: want}
		usedAny = f.openOn(t, fsys.CrashState()) || usedAny
	}
	require.True(t, usedAny, "the crash after the last operation leaves a usable snapshot")
}

// TestChunkSnapshotRecordLost: a log of the snapshot that lost any one
// whole record (as a lost segment or a cut at a record boundary would
// leave it: it reads without error) is not used.
func TestChunkSnapshotRecordLost(t *testing.T) {
	f := newSnapFixture(t)
	for _, dir := range []string{f.dir, filepath.Join(f.dir, chunkSnapshotExtraDir)} {
		var recs [][]byte
		require.NoError(t, readSnapshotLog(f.fsys, dir, func(rec []byte) error {
			recs = append(recs, append([]byte(nil), rec...))
			return nil
		}))
		require.Greater(t, len(recs), 2)
		for i := range recs {
			c := f.fsys.Crash()
			require.NoError(t, c.RemoveAll(dir))
			w, err := wlog.Open(nil, nil, c, dir, wlog.Options{})
			require.NoError(t, err)
			for j, rec := range recs {
				if j != i {
					require.NoError(t, w.Log(rec))
				}
			}
			require.NoError(t, w.Close())
			c.SyncAll()
			require.False(t, f.openOn(t, c), "%s without record %d of %d used", dir, i, len(recs))
		}
	}
}
