package tsdb

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// isoCheck verifies, on everything q returns for the targets, that every
// commit is seen whole (a histogram's value is its count): within a target all series have the same
// timestamps with the same values, and values increase with time (each
// commit writes its sequence number). It returns the number of samples.
func isoCheck(q Querier, targets, perTarget int) (int, error) {
	n := 0
	for tg := 0; tg < targets; tg++ {
		ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, "target", fmt.Sprint(tg)))
		var ref []sample
		series := 0
		for ss.Next() {
			it := ss.At().Iterator(nil)
			var got []sample
			for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
				ts, v := it.AtT(), 0.0
				switch vt {
				case chunks.ValFloat:
					_, v = it.At()
				default: // histograms carry the value as their count
					_, fh := it.AtFloatHistogram(nil)
					v = fh.Count
				}
				if len(got) > 0 && (ts <= got[len(got)-1].T || v <= got[len(got)-1].V) {
					return n, fmt.Errorf("target %d %s: sample (%d, %v) after (%d, %v)", tg, ss.At().Labels(), ts, v, got[len(got)-1].T, got[len(got)-1].V)
				}
				got = append(got, sample{ts, v})
			}
			if err := it.Err(); err != nil {
				return n, err
			}
			if series > 0 && !sameData(map[string][]sample{"": ref}, map[string][]sample{"": got}) {
				return n, fmt.Errorf("target %d: series %s has %d samples, the first had %d: a commit seen in part", tg, ss.At().Labels(), len(got), len(ref))
			}
			ref = got
			series++
			n += len(got)
		}
		if err := ss.Err(); err != nil {
			return n, err
		}
		if series != 0 && series != perTarget {
			return n, fmt.Errorf("target %d: %d of %d series", tg, series, perTarget)
		}
	}
	return n, nil
}

// TestAdversarialConcurrentAdmin runs Delete, Snapshot, CleanTombstones
// and Compact concurrently with writers (one commit writes one value to
// every series of a target, as a float or an integer or float histogram) and readers that check each query sees
// whole commits. Snapshots must hold whole commits too. In the late
// variant every commit also writes a late sample, lateLag commits back:
// hours behind the head, in ranges already in blocks, which compactions
// move into overlapping blocks and merge while the rest runs.
func TestAdversarialConcurrentAdmin(t *testing.T) {
	t.Run("in-order", func(t *testing.T) { testAdversarialConcurrentAdmin(t, false) })
	t.Run("late", func(t *testing.T) { testAdversarialConcurrentAdmin(t, true) })
}

func testAdversarialConcurrentAdmin(t *testing.T, late bool) {
	const (
		targets   = 4
		perTarget = 10
		step      = 5 * 60_000 // 5 min between commits: blocks are cut quickly
		lateLag   = 40         // commits: 3h20m, behind the head's range
	)
	commits := 300
	if raceEnabled {
		commits = 150
	}
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	o.RetentionDuration = 24 * time.Hour
	if late {
		o.OutOfOrderTimeWindow = 12 * time.Hour
	}
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)

	lsets := make([][]labels.Labels, targets)
	for tg := range lsets {
		for i := 0; i < perTarget; i++ {
			lsets[tg] = append(lsets[tg], labels.FromStrings(labels.MetricName, fmt.Sprintf("m%d", i), "target", fmt.Sprint(tg)))
		}
	}
	var (
		wg       sync.WaitGroup
		writers  sync.WaitGroup
		done     atomic.Bool
		errc     = make(chan error, 100)
		snapshot atomic.Int64
		reads    atomic.Int64
		ran      sync.Map // admin operation name -> *atomic.Int64
	)
	report := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	// One writer per target; they move through the commits in step (a
	// writer far ahead would push the others out of the appendable window).
	rounds := make([]chan int, targets)
	var round sync.WaitGroup
	for tg := 0; tg < targets; tg++ {
		rounds[tg] = make(chan int)
		writers.Add(1)
		go func() {
			defer writers.Done()
			refs := make([]SeriesRef, perTarget)
			for c := range rounds[tg] {
				app := db.Appender(ctx)
				// Values grow with time (isoCheck): 2c at commit c's
				// time, 2(c-lateLag)+1 half a step after commit
				// c-lateLag's.
				type point struct {
					t int64
					v int
				}
				points := []point{{int64(c) * step, 2 * c}}
				if late && c > lateLag {
					points = append(points, point{int64(c-lateLag)*step + step/2, 2*(c-lateLag) + 1})
				}
				for i, l := range lsets[tg] {
					// A third of the series take integer and a third
					// float histograms (of count v), so that blocks,
					// compaction, deletion and snapshots carry them too.
					for _, p := range points {
						var ref SeriesRef
						var err error
						switch h := crashHistogram(p.v); i % 3 {
						case 0:
							ref, err = app.Append(refs[i], l, p.t, float64(p.v))
						case 1:
							ref, err = app.AppendHistogram(refs[i], l, p.t, h, nil)
						default:
							ref, err = app.AppendHistogram(refs[i], l, p.t, nil, h.ToFloat())
						}
						if err != nil {
							report(fmt.Errorf("append at %d: %w", p.t, err))
							break
						}
						refs[i] = ref
					}
				}
				if err := app.Commit(); err != nil {
					report(fmt.Errorf("commit: %w", err))
				}
				round.Done()
			}
		}()
	}
	go func() {
		for c := 1; c <= commits; c++ {
			round.Add(targets)
			for _, ch := range rounds {
				ch <- c
			}
			round.Wait()
		}
		for _, ch := range rounds {
			close(ch)
		}
	}()
	// Readers.
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				q, err := db.Querier(math.MinInt64, math.MaxInt64)
				if err != nil {
					report(err)
					return
				}
				_, err = isoCheck(q, targets, perTarget)
				q.Close()
				if err != nil {
					report(fmt.Errorf("reader: %w", err))
					return
				}
				reads.Add(1)
			}
		}()
	}
	// Admin: each operation in a loop of its own.
	admin := map[string]func(i int) error{
		"delete": func(i int) error {
			tg := i % targets
			mint := int64(i%50) * step
			return db.Delete(ctx, mint, mint+int64(i%7)*step, labels.MustNewMatcher(labels.MatchEqual, "target", fmt.Sprint(tg)))
		},
		"deleteAll": func(i int) error {
			if i%5 != 4 {
				return nil
			}
			return db.Delete(ctx, 0, math.MaxInt64, labels.MustNewMatcher(labels.MatchEqual, "target", fmt.Sprint(i%targets)))
		},
		"cleanTombstones": func(int) error { return db.CleanTombstones(ctx) },
		"compact": func(int) error {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return db.Compact(cctx)
		},
		"snapshot": func(i int) error {
			dir := fmt.Sprintf("snap-%d", snapshot.Add(1))
			if err := db.Snapshot(dir, i%2 == 0); err != nil {
				return err
			}
			sdb, err := Open(dir, nil, nil, &Options{FS: fsys, NoWAL: true, NoLockfile: true})
			if err != nil {
				return fmt.Errorf("open snapshot: %w", err)
			}
			defer sdb.Close()
			q, err := sdb.Querier(math.MinInt64, math.MaxInt64)
			if err != nil {
				return err
			}
			defer q.Close()
			if _, err := isoCheck(q, targets, perTarget); err != nil {
				return fmt.Errorf("snapshot %s: %w", dir, err)
			}
			return fsys.RemoveAll(filepath.Clean(dir))
		},
	}
	for name, f := range admin {
		wg.Add(1)
		n := new(atomic.Int64)
		ran.Store(name, n)
		go func() {
			defer wg.Done()
			for i := 0; !done.Load(); i++ {
				if err := f(i); err != nil {
					report(fmt.Errorf("%s: %w", name, err))
					return
				}
				n.Add(1)
			}
		}()
	}
	writers.Wait()
	done.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		assert.NoError(t, err) // report every goroutine's error
	}
	counts := fmt.Sprintf("reads %d", reads.Load())
	ran.Range(func(k, v any) bool {
		counts += fmt.Sprintf(", %s %d", k, v.(*atomic.Int64).Load())
		require.Positive(t, v.(*atomic.Int64).Load(), "%s never ran", k)
		return true
	})
	t.Log(counts, ", blocks ", len(db.Blocks()))
	require.Positive(t, reads.Load())
	// The end state is whole, and stays so over a reopen.
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	_, err = isoCheck(q, targets, perTarget)
	require.NoError(t, err)
	before := querySamples(t, q)
	require.NoError(t, q.Close())
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	q, err = db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	requireSameSamples(t, before, querySamples(t, q))
	require.NoError(t, q.Close())
	require.NoError(t, db.Close())
}
