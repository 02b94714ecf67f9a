package tsdb

import (
	"io/fs"
	"math"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// Block lifetime: what a Querier hands out stays readable after Close,
// whatever happens to the blocks it read.
//
// The tests that read block data after the blocks are gone run on the real
// filesystem: there the block files are mapped, and reading an unmapped
// block kills the process (MemFS maps copies, which stay readable).

// writeRounds commits rounds [from, to) of lsets, 15 s apart, one commit
// per round, with values from scrapeValue.
func writeRounds(t testing.TB, db *DB, lsets []labels.Labels, from, to int) {
	t.Helper()
	for r := from; r < to; r++ {
		app := db.Appender(ctx)
		for i, l := range lsets {
			_, err := app.Append(0, l, int64(r)*15000, scrapeValue(i, r))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
}

// roundsPerHour is the number of 15 s rounds in an hour.
const roundsPerHour = 3600 / 15

// readSeriesSet reads what is left of ss, every series with a fresh
// iterator, into a map by series string.
func readSeriesSet(t testing.TB, ss SeriesSet) map[string][]sample {
	t.Helper()
	out, err := collectSeriesSet(ss)
	require.NoError(t, err)
	return out
}

// collectSeriesSet is readSeriesSet for goroutines other than the test's.
func collectSeriesSet(ss SeriesSet) (map[string][]sample, error) {
	out := map[string][]sample{}
	for ss.Next() {
		s := ss.At()
		var got []sample
		it := s.Iterator(nil)
		for it.Next() != chunks.ValNone {
			ts, v := it.At()
			got = append(got, sample{ts, v})
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		if len(got) > 0 {
			out[s.Labels().String()] = got
		}
	}
	return out, ss.Err()
}

func readIterator(t testing.TB, it chunks.Iterator) []sample {
	t.Helper()
	var got []sample
	for it.Next() != chunks.ValNone {
		ts, v := it.At()
		got = append(got, sample{ts, v})
	}
	require.NoError(t, it.Err())
	return got
}

// wantRounds is what writeRounds wrote of lsets in rounds [from, to).
func wantRounds(lsets []labels.Labels, from, to int) map[string][]sample {
	out := map[string][]sample{}
	for i, l := range lsets {
		for r := from; r < to; r++ {
			out[l.String()] = append(out[l.String()], sample{int64(r) * 15000, scrapeValue(i, r)})
		}
	}
	return out
}

// TestSeriesSetAfterQuerierAndDBClose: a series
// set read after its Querier and the DB were closed. It used to die with
// SIGSEGV in the block's postings reader; now it returns the whole
// snapshot.
func TestSeriesSetAfterQuerierAndDBClose(t *testing.T) {
	o := DefaultOptions()
	o.MinBlockDuration = time.Hour
	db, err := Open(t.TempDir(), nil, nil, o)
	require.NoError(t, err)
	lsets := loadSeries(t, 50)
	writeRounds(t, db, lsets, 0, 4*roundsPerHour)
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())

	q, err := db.Querier(0, math.MaxInt64)
	require.NoError(t, err)
	ss := q.Select(ctx)
	require.NoError(t, q.Close())
	require.NoError(t, db.Close())
	runtime.GC() // the set is still reachable: its blocks must stay mapped
	requireSameSamples(t, wantRounds(lsets, 0, 4*roundsPerHour), readSeriesSet(t, ss))
}

// TestSeriesSetAfterBlockDeleted reads a series set, obtained before its
// Querier was closed, after compaction, retention or CleanTombstones
// deleted the blocks it reads.
func TestSeriesSetAfterBlockDeleted(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(*Options)
		// prepare runs before the querier is created; remove deletes the
		// blocks afterwards.
		prepare, remove func(t *testing.T, db *DB, lsets []labels.Labels)
	}{
		{
			name: "compaction",
			opts: func(o *Options) { o.MaxBlockDuration = 3 * time.Hour },
			prepare: func(t *testing.T, db *DB, lsets []labels.Labels) {
				writeRounds(t, db, lsets, 0, 2*roundsPerHour+roundsPerHour/2)
				require.NoError(t, db.Compact(ctx)) // cuts [0h, 1h)
			},
			remove: func(t *testing.T, db *DB, lsets []labels.Labels) {
				writeRounds(t, db, lsets, 2*roundsPerHour+roundsPerHour/2, 5*roundsPerHour)
				require.NoError(t, db.Compact(ctx)) // cuts up to 3h and merges [0h, 3h)
			},
		},
		{
			name: "retention",
			opts: func(o *Options) { o.RetentionDuration = 2 * time.Hour },
			prepare: func(t *testing.T, db *DB, lsets []labels.Labels) {
				writeRounds(t, db, lsets, 0, 2*roundsPerHour+roundsPerHour/2)
				require.NoError(t, db.Compact(ctx))
			},
			remove: func(t *testing.T, db *DB, lsets []labels.Labels) {
				writeRounds(t, db, lsets, 2*roundsPerHour+roundsPerHour/2, 4*roundsPerHour)
				require.NoError(t, db.Compact(ctx)) // [0h, 1h) is out of retention
			},
		},
		{
			name: "clean tombstones",
			prepare: func(t *testing.T, db *DB, lsets []labels.Labels) {
				writeRounds(t, db, lsets, 0, 2*roundsPerHour+roundsPerHour/2)
				require.NoError(t, db.Compact(ctx))
				m := labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, lsets[0].Get(labels.MetricName))
				require.NoError(t, db.Delete(ctx, 0, 600_000, m))
			},
			remove: func(t *testing.T, db *DB, lsets []labels.Labels) {
				require.NoError(t, db.CleanTombstones(ctx))
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.MinBlockDuration = time.Hour
			if tc.opts != nil {
				tc.opts(o)
			}
			db, err := Open(t.TempDir(), nil, nil, o)
			require.NoError(t, err)
			defer db.Close()
			lsets := loadSeries(t, 50)
			tc.prepare(t, db, lsets)
			before := db.Blocks()
			require.NotEmpty(t, before)

			// What the querier sees, read by a twin created at the same
			// time and closed before the blocks go.
			q, err := db.Querier(0, math.MaxInt64)
			require.NoError(t, err)
			twin, err := db.Querier(0, math.MaxInt64)
			require.NoError(t, err)
			want := querySamples(t, twin)
			require.NoError(t, twin.Close())
			ss := q.Select(ctx)
			// Half read before Close, half after.
			got := map[string][]sample{}
			for range len(want) / 2 {
				require.True(t, ss.Next())
				got[ss.At().Labels().String()] = readIterator(t, ss.At().Iterator(nil))
			}
			require.NoError(t, q.Close())

			tc.remove(t, db, lsets)
			for _, m := range before {
				require.NotContains(t, db.Blocks(), m)
				_, err := vfs.OS().Stat(filepath.Join(db.Dir(), m.ULID.String()))
				require.ErrorIs(t, err, fs.ErrNotExist, "block %s still on disk", m.ULID)
			}
			runtime.GC()
			for k, v := range readSeriesSet(t, ss) {
				got[k] = v
			}
			requireSameSamples(t, want, got)
		})
	}
}

// TestIteratorsAfterQuerierClose: Series and iterators obtained before
// Close, some half read, iterate exactly what the querier saw after Close,
// after commits that follow it, after the blocks are compacted away and
// after the DB is closed; and the rest of a half-read series set, which
// reads the head, sees the querier's snapshot, not later commits.
func TestIteratorsAfterQuerierClose(t *testing.T) {
	o := DefaultOptions()
	o.MinBlockDuration = time.Hour
	o.MaxBlockDuration = 3 * time.Hour
	db, err := Open(t.TempDir(), nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	lsets := loadSeries(t, 40)
	const end = 2*roundsPerHour + roundsPerHour/2
	writeRounds(t, db, lsets, 0, end)
	require.NoError(t, db.Compact(ctx))
	blocks := db.Blocks()
	require.NotEmpty(t, blocks)
	want := wantRounds(lsets, 0, end)

	q, err := db.Querier(0, math.MaxInt64)
	require.NoError(t, err)
	// Series of the first half, each with an iterator: half of them
	// advanced into their blocks' data.
	ss := q.Select(ctx)
	type held struct {
		key  string
		it   chunks.Iterator
		read []sample
	}
	var hold []held
	for range len(lsets) / 2 {
		require.True(t, ss.Next())
		s := ss.At()
		h := held{key: s.Labels().String(), it: s.Iterator(nil)}
		if len(hold)%2 == 0 {
			for range 100 {
				require.True(t, h.it.Next() != chunks.ValNone)
				ts, v := h.it.At()
				h.read = append(h.read, sample{ts, v})
			}
		}
		hold = append(hold, h)
	}
	require.NoError(t, q.Close())

	// Commits after Close: the rest of the set must not see them, even
	// once the write IDs that hide them are forgotten (the second commit
	// trims the first one's from every series' ring).
	writeRounds(t, db, lsets, end, end+2*roundsPerHour)
	require.NoError(t, db.Compact(ctx)) // merges [0h, 3h): the querier's blocks go
	for _, m := range blocks {
		require.NotContains(t, db.Blocks(), m)
	}
	require.NoError(t, db.Close())
	runtime.GC()

	got := readSeriesSet(t, ss)
	for _, h := range hold {
		got[h.key] = append(h.read, readIterator(t, h.it)...)
	}
	requireSameSamples(t, want, got)
}

// TestHeadSeriesSetAfterQuerierClose: the unread rest of a series set over
// the head returns the querier's snapshot after Close, not the commits
// made after it.
func TestHeadSeriesSetAfterQuerierClose(t *testing.T) {
	db, _ := openTestDB(t, nil)
	lsets := loadSeries(t, 20)
	writeRounds(t, db, lsets, 0, 10)
	q, err := db.Querier(0, math.MaxInt64)
	require.NoError(t, err)
	ss := q.Select(ctx)
	require.True(t, ss.Next())
	first := map[string][]sample{ss.At().Labels().String(): readIterator(t, ss.At().Iterator(nil))}
	require.NoError(t, q.Close())
	writeRounds(t, db, lsets, 10, 13)
	got := readSeriesSet(t, ss)
	for k, v := range first {
		got[k] = v
	}
	requireSameSamples(t, wantRounds(lsets, 0, 10), got)
}

// TestQuerierCloseWhileReading closes a querier while another goroutine
// reads a series set of it and a writer commits: the reader gets exactly
// the querier's snapshot (and the race detector sees no race between
// Close and Next).
func TestQuerierCloseWhileReading(t *testing.T) {
	db, _ := openTestDB(t, nil)
	lsets := loadSeries(t, 300)
	writeRounds(t, db, lsets, 0, 5)
	for end := 5; end < 15; end += 2 {
		q, err := db.Querier(0, math.MaxInt64)
		require.NoError(t, err)
		ss := q.Select(ctx)
		type result struct {
			samples map[string][]sample
			err     error
		}
		done := make(chan result, 1)
		go func() {
			var r result
			r.samples, r.err = collectSeriesSet(ss)
			done <- r
		}()
		require.NoError(t, q.Close())
		writeRounds(t, db, lsets, end, end+2)
		r := <-done
		require.NoError(t, r.err)
		requireSameSamples(t, wantRounds(lsets, 0, end), r.samples)
	}
}
