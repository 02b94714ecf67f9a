package tsdb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestSnapshotUnderChurn takes snapshots for a few seconds while writers
// commit, the background compaction cuts and merges blocks and applies
// retention, and other goroutines Delete and CleanTombstones. Every
// snapshot must succeed, open cleanly, hold whole commits only and every
// commit acknowledged before its Snapshot call.
//
// Each writer commits round k to its perCommit series with value k at
// k*step, plus a sample to each of two victim series, which the
// deleter deletes from: a partial commit shows as a round some of the
// writer's series lack.
func TestSnapshotUnderChurn(t *testing.T) {
	fsys := vfs.NewMemFS()
	// Links into a snapshot are slowed down (injected latency, not
	// synchronization): it widens the window in which a block being
	// linked could be deleted, as on a slow disk.
	fsys.SetHook(func(op vfs.Op, path string) error {
		if op == vfs.OpLink && strings.HasPrefix(path, "snapshots/") {
			time.Sleep(500 * time.Microsecond)
		}
		return nil
	})
	o := DefaultOptions()
	o.FS = fsys
	o.MinBlockDuration = time.Minute
	o.MaxBlockDuration = 3 * time.Minute
	o.RetentionDuration = 3 * time.Minute
	reg := prometheus.NewRegistry()
	db, err := Open("data", nil, reg, o)
	require.NoError(t, err)
	defer db.Close()

	const (
		writers   = 2
		perCommit = 8
		step      = 1000 // ms between rounds: a block per 60 rounds
	)
	duration := 2 * time.Second
	if raceEnabled {
		duration = 4 * time.Second
	}
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		acked    [writers]atomic.Int64 // newest round acknowledged per writer
		bgErrs   = make(chan error, 16)
		reportTo = func(err error) {
			select {
			case bgErrs <- err:
			default:
			}
		}
	)
	victim := func(i int) labels.Labels {
		return labels.FromStrings(labels.MetricName, "victim", "i", fmt.Sprint(i))
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int64(1); !stop.Load(); k++ {
				// Writers keep in step, so that a block cut for one is
				// never in the past of the other.
				for k > acked[1-w].Load()+3 && !stop.Load() {
					time.Sleep(20 * time.Microsecond)
				}
				app := db.Appender(ctx)
				for i := range perCommit {
					l := labels.FromStrings(labels.MetricName, "whole", "w", fmt.Sprint(w), "i", fmt.Sprint(i))
					if _, err := app.Append(0, l, k*step, float64(k)); err != nil {
						reportTo(fmt.Errorf("writer %d round %d: %w", w, k, err))
						return
					}
				}
				for i := range 2 {
					if _, err := app.Append(0, victim(2*w+i), k*step, float64(k)); err != nil {
						reportTo(fmt.Errorf("writer %d round %d: %w", w, k, err))
						return
					}
				}
				if err := app.Commit(); err != nil {
					reportTo(fmt.Errorf("writer %d round %d: %w", w, k, err))
					return
				}
				acked[w].Store(k)
				time.Sleep(300 * time.Microsecond)
			}
		}()
	}
	wg.Add(1)
	go func() { // deletes from the victims, then cleans the tombstones
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for !stop.Load() {
			now := acked[0].Load() * step
			mint := now - rng.Int64N(o.RetentionDuration.Milliseconds()) // inside the retention window
			m := labels.MustNewMatcher(labels.MatchEqual, "i", fmt.Sprint(rng.IntN(2*writers)))
			if err := db.Delete(ctx, mint, mint+rng.Int64N(20_000), labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "victim"), m); err != nil {
				reportTo(fmt.Errorf("delete: %w", err))
				return
			}
			if err := db.CleanTombstones(ctx); err != nil {
				reportTo(fmt.Errorf("clean tombstones: %w", err))
				return
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()

	for acked[0].Load() < 5 || acked[1].Load() < 5 {
		time.Sleep(500 * time.Microsecond)
		select {
		case err := <-bgErrs:
			require.NoError(t, err)
		default:
		}
	}
	// Snapshots are taken back to back; a checker verifies them meanwhile.
	type taken struct {
		n     int
		dir   string
		floor [writers]int64
	}
	check := func(sn taken) error {
		defer fsys.RemoveAll(sn.dir)
		sdb, err := OpenReadOnly(sn.dir, nil, &Options{FS: fsys})
		if err != nil {
			return err
		}
		defer sdb.Close()
		ents, err := fsys.ReadDir(sn.dir)
		if err != nil {
			return err
		}
		dirs := 0
		for _, e := range ents {
			if _, ok := isBlockDir(e); ok {
				dirs++
			}
		}
		if len(sdb.Blocks()) != dirs {
			return fmt.Errorf("%d of %d blocks opened", len(sdb.Blocks()), dirs)
		}
		q, err := sdb.Querier(math.MinInt64, math.MaxInt64)
		if err != nil {
			return err
		}
		defer q.Close()
		got := map[string][]sample{}
		for _, name := range []string{"whole", "victim"} {
			ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, name))
			for ss.Next() {
				var read []sample
				it := ss.At().Iterator(nil)
				for it.Next() != chunks.ValNone {
					ts, v := it.At()
					read = append(read, sample{ts, v})
				}
				if err := it.Err(); err != nil {
					return err
				}
				if name == "whole" && len(read) > 0 {
					got[ss.At().Labels().String()] = read
				}
			}
			if err := ss.Err(); err != nil {
				return err
			}
		}
		maxT := int64(math.MinInt64)
		for _, ss := range got {
			maxT = max(maxT, ss[len(ss)-1].T)
		}
		retention := o.RetentionDuration.Milliseconds()
		for w := range writers {
			// Every series of the writer holds the same rounds: lo..hi,
			// without gaps (retention removes whole blocks, oldest first).
			var lo, hi int64
			for i := range perCommit {
				key := labels.FromStrings(labels.MetricName, "whole", "w", fmt.Sprint(w), "i", fmt.Sprint(i)).String()
				ss := got[key]
				if len(ss) == 0 {
					return fmt.Errorf("%s missing", key)
				}
				if i == 0 {
					lo, hi = ss[0].T/step, ss[len(ss)-1].T/step
				}
				if ss[0].T != lo*step || ss[len(ss)-1].T != hi*step || len(ss) != int(hi-lo+1) {
					return fmt.Errorf("%s: %d samples from %v to %v, others of the writer hold rounds %d to %d: a partial commit",
						key, len(ss), ss[0], ss[len(ss)-1], lo, hi)
				}
				for j, s := range ss {
					if s.T != (lo+int64(j))*step || s.V != float64(lo+int64(j)) {
						return fmt.Errorf("%s: sample %d is %v, want round %d", key, j, s, lo+int64(j))
					}
				}
			}
			if hi < sn.floor[w] {
				return fmt.Errorf("writer %d: newest round %d, but %d was acknowledged before the call", w, hi, sn.floor[w])
			}
			// Retention keeps at least the window before the newest data
			// (it drops blocks whole: a block range of slack).
			if lo > 1 && lo*step > maxT-retention+o.MinBlockDuration.Milliseconds() {
				return fmt.Errorf("writer %d: oldest round %d, newest data at %d: data inside the retention window is missing", w, lo, maxT)
			}
		}
		return nil
	}
	toCheck := make(chan taken, 4)
	checkErr := make(chan error, 1)
	checked := 0
	go func() {
		defer close(checkErr)
		for sn := range toCheck {
			if err := check(sn); err != nil {
				checkErr <- fmt.Errorf("snapshot %d: %w", sn.n, err)
				for range toCheck {
				}
				return
			}
			checked++
		}
	}()
	deadline := time.Now().Add(duration)
	n := 0
	for ; time.Now().Before(deadline); n++ {
		select {
		case err := <-bgErrs:
			close(toCheck)
			<-checkErr
			require.NoError(t, err)
		default:
		}
		sn := taken{n: n, dir: fmt.Sprintf("snapshots/%d", n)}
		for w := range writers {
			sn.floor[w] = acked[w].Load()
		}
		if err := db.Snapshot(sn.dir, true); err != nil {
			close(toCheck)
			<-checkErr
			require.NoError(t, err, "snapshot %d", n)
		}
		toCheck <- sn
	}
	close(toCheck)
	require.NoError(t, <-checkErr)
	stop.Store(true)
	wg.Wait()
	select {
	case err := <-bgErrs:
		require.NoError(t, err)
	default:
	}
	compactions, retained := gauge(t, reg, "tsdb_compactions_total"), gauge(t, reg, "tsdb_retention_deletions_total")
	require.Equal(t, n, checked)
	t.Logf("%d snapshots, rounds acknowledged %d/%d, %v compactions, %v blocks deleted by retention",
		n, acked[0].Load(), acked[1].Load(), compactions, retained)
	require.GreaterOrEqual(t, n, 10, "too few snapshots to mean anything")
	require.GreaterOrEqual(t, compactions, 5.0, "too little churn to mean anything")
	require.GreaterOrEqual(t, retained, 1.0, "retention never ran")
	require.NoError(t, func() error {
		if err := db.bgErr.Load(); err != nil && !errors.Is(*err, context.Canceled) {
			return *err
		}
		return nil
	}())
}
