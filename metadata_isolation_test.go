package tsdb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
)

// TestMetadataVersions drives one series' versions through commits that
// overlap, checking what each snapshot sees and what the trimming keeps.
func TestMetadataVersions(t *testing.T) {
	iso := newIsolation()
	s := newMemSeries(1, labels.FromStrings("__name__", "m"))
	md := func(i int) Metadata { return Metadata{Type: MetricTypeGauge, Help: strconv.Itoa(i)} }
	set := func(w *inflightWrite, lw uint64, i int) {
		s.mu.Lock()
		s.setMetaLocked(unique.Make(md(i)), w.id, lw)
		s.mu.Unlock()
	}
	sees := func(snap *readSnapshot) (Metadata, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return visibleMetadata(snap, s.x.meta)
	}
	none := iso.snapshot()
	var w1, w2, w3 inflightWrite
	set(&w1, iso.beginCommit(&w1), 1)
	iso.endCommit(&w1)
	afterW1 := iso.snapshot()
	lw2 := iso.beginCommit(&w2)
	lw3 := iso.beginCommit(&w3)
	set(&w2, lw2, 2)
	set(&w3, lw3, 3)
	during := iso.snapshot() // 2 and 3 in flight
	iso.endCommit(&w3)
	only3 := iso.snapshot() // 2 still in flight
	iso.endCommit(&w2)
	all := iso.snapshot()

	_, ok := sees(none)
	require.False(t, ok, "a read from before the first commit sees no metadata")
	for _, c := range []struct {
		name string
		snap *readSnapshot
		want int
	}{{"after 1", afterW1, 1}, {"during 2 and 3", during, 1}, {"3 but not 2", only3, 3}, {"all", all, 3}} {
		m, ok := sees(c.snap)
		require.True(t, ok, c.name)
		require.Equal(t, md(c.want), m, c.name)
	}
	m, ok := sees(nil)
	require.True(t, ok)
	require.Equal(t, md(3), m, "isolation off sees the newest")

	// While every read is open, all versions are kept.
	require.Len(t, s.x.meta.older, 2)
	for _, snap := range []*readSnapshot{none, afterW1, during, only3} {
		snap.release()
	}
	// Only "all" (which sees everything up to 3) is open: a new commit
	// keeps the version before it, which "all" still needs, and drops the
	// others.
	var w4 inflightWrite
	set(&w4, iso.beginCommit(&w4), 4)
	iso.endCommit(&w4)
	require.Len(t, s.x.meta.older, 1)
	m, _ = sees(all)
	require.Equal(t, md(3), m)
	all.release()
	// A version below the watermark needs nothing before it.
	s.mu.Lock()
	s.setMetaLocked(unique.Make(md(5)), 0, iso.lowWatermark())
	s.mu.Unlock()
	require.Nil(t, s.x.meta.older)
}

func TestTrimMetaVersions(t *testing.T) {
	v := func(id uint64) metaVersion {
		return metaVersion{m: unique.Make(Metadata{Help: strconv.FormatUint(id, 10)}), id: id}
	}
	ids := func(vs []metaVersion) []uint64 {
		var out []uint64
		for _, x := range vs {
			out = append(out, x.id)
		}
		return out
	}
	for _, c := range []struct {
		older  []uint64
		newest uint64
		lw     uint64
		want   []uint64
	}{
		{[]uint64{1, 2, 3}, 4, 5, nil},                        // the newest is visible to all
		{[]uint64{1, 2, 3}, 0, 1, nil},                        // replayed or isolation off
		{[]uint64{1, 2, 3}, 5, 3, []uint64{2, 3}},             // 2 is the newest visible to all
		{[]uint64{1, 2, 3}, 5, 1, []uint64{1, 2, 3}},          // nothing settled
		{[]uint64{0, 7, 3, 8}, 9, 5, []uint64{3, 8}},          // apply order, not ID order
		{[]uint64{6, 7}, 9, 5, []uint64{6, 7}},                // none below: all kept
		{[]uint64{2}, 9, 5, []uint64{2}},                      // steady state
		{nil, 9, 5, nil},                                      // first update
		{[]uint64{4, 4, 4}, 9, 5, []uint64{4}},                // equal IDs
		{[]uint64{1, 10, 2, 11}, 12, 12, []uint64{11}},        // all below
		{[]uint64{10, 1, 11, 2}, 12, 11, []uint64{2}},         // last below wins
		{[]uint64{10, 1, 11, 2, 13}, 14, 11, []uint64{2, 13}}, // and keeps what follows
	} {
		var older []metaVersion
		for _, id := range c.older {
			older = append(older, v(id))
		}
		got := trimMetaVersions(older, v(c.newest), c.lw)
		require.Equal(t, c.want, ids(got), "older %v newest %d watermark %d", c.older, c.newest, c.lw)
		if c.want == nil {
			require.Nil(t, got)
		}
	}
}

// TestMetadataConcurrent runs writers and readers at once (meant for
// -race). Writer w owns series {w, i}: each of its commits sets the help
// of all of them to the round and appends the round as their sample, so a
// reader that sees a commit sees, for every series of the writer, help ==
// the value of the newest sample it sees. Every few rounds a writer rolls
// back an update whose help readers must never see. All writers also
// update one shared series, which readers only read.
func TestMetadataConcurrent(t *testing.T) {
	db, _ := openTestDB(t, nil)
	noWakeups(db)
	const writers, perWriter = 3, 4
	rounds := 300
	if raceEnabled {
		rounds = 100
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	shared := labels.FromStrings("__name__", "shared")
	lset := func(w, i int) labels.Labels {
		return labels.FromStrings("__name__", "m", "w", strconv.Itoa(w), "i", strconv.Itoa(i))
	}
	// Every series exists before the readers start.
	app := db.Appender(context.Background())
	for w := range writers {
		for i := range perWriter {
			_, err := app.Append(0, lset(w, i), 0, 0)
			require.NoError(t, err)
		}
	}
	_, err := app.Append(0, shared, 0, 0)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	var done atomic.Bool
	var wg sync.WaitGroup
	// The writers start once a reader has read, so that reads overlap
	// the writes however fast the writers are.
	readerUp := make(chan struct{})
	var readerUpOnce sync.Once
	errs := make(chan error, writers+3) // writers, readers, the watcher: one error each at most
	for w := range writers {
		wg.Go(func() {
			<-readerUp
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for round := 1; round <= rounds; round++ {
				app := db.Appender(context.Background())
				for i := range perWriter {
					ref, err := app.Append(0, lset(w, i), int64(round), float64(round))
					if err == nil {
						_, err = app.UpdateMetadata(ref, labels.EmptyLabels(), Metadata{Type: MetricTypeCounter, Help: strconv.Itoa(round)})
					}
					if err != nil {
						errs <- err
						return
					}
				}
				if _, err := app.UpdateMetadata(0, shared, Metadata{Help: fmt.Sprint(w, round)}); err != nil {
					errs <- err
					return
				}
				if r.IntN(5) == 0 {
					_, _ = app.UpdateMetadata(0, lset(w, 0), Metadata{Help: "rolled back"})
					_, _ = app.UpdateMetadata(0, shared, Metadata{Help: "rolled back"})
					if err := app.Rollback(); err != nil {
						errs <- err
						return
					}
					round--
					continue
				}
				if err := app.Commit(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var reads atomic.Int64
	for range 2 {
		wg.Go(func() {
			defer readerUpOnce.Do(func() { close(readerUp) })
			for !done.Load() {
				if err := checkMetadataRead(db, writers, perWriter, lset); err != nil {
					errs <- err
					return
				}
				reads.Add(1)
				readerUpOnce.Do(func() { close(readerUp) })
			}
		})
	}
	// Stop the readers once the writers are done.
	writersDone := make(chan struct{})
	go func() {
		defer close(writersDone)
		for {
			q, err := db.Querier(0, int64(rounds))
			if err != nil {
				errs <- err
				return
			}
			m, _, err := q.SeriesMetadata(lset(writers-1, perWriter-1))
			_ = q.Close()
			if err != nil {
				errs <- err
				return
			}
			if m.Help == strconv.Itoa(rounds) || len(errs) > 0 {
				return
			}
		}
	}()
	<-writersDone
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "seed %d", seed)
	}
	require.Positive(t, reads.Load())
	require.NoError(t, checkMetadataRead(db, writers, perWriter, lset))
	for w := range writers {
		m, _ := seriesMetaNow(t, db, lset(w, 0))
		require.Equal(t, strconv.Itoa(rounds), m.Help)
	}
}

// checkMetadataRead opens a Querier and checks TestMetadataConcurrent's
// invariant on it.
func checkMetadataRead(db *DB, writers, perWriter int, lset func(w, i int) labels.Labels) error {
	q, err := db.Querier(0, 1<<30)
	if err != nil {
		return err
	}
	defer q.Close()
	all, err := q.Metadata(context.Background(), "")
	if err != nil {
		return err
	}
	for _, ms := range all {
		for _, m := range ms {
			if m.Help == "rolled back" {
				return fmt.Errorf("a rolled-back update is visible: %v", all)
			}
		}
	}
	for w := range writers {
		ss := q.Select(context.Background(), labels.MustNewMatcher(labels.MatchEqual, "w", strconv.Itoa(w)))
		n := 0
		for ss.Next() {
			s := ss.At()
			var last float64
			it := s.Iterator(nil)
			for it.Next() != chunks.ValNone {
				_, last = it.At()
			}
			if err := it.Err(); err != nil {
				return err
			}
			m, ok, err := q.SeriesMetadata(s.Labels())
			if err != nil {
				return err
			}
			want := strconv.Itoa(int(last))
			if last == 0 {
				// Only the setup commit: no metadata yet.
				if ok {
					return fmt.Errorf("%s: metadata %+v before any commit that set it", s.Labels(), m)
				}
			} else if !ok || m.Help != want || m.Type != MetricTypeCounter {
				return fmt.Errorf("%s: newest sample %v but metadata %+v (ok %v): a commit seen in part", s.Labels(), last, m, ok)
			}
			n++
		}
		if err := ss.Err(); err != nil {
			return err
		}
		if n != perWriter {
			return fmt.Errorf("writer %d: %d series, want %d", w, n, perWriter)
		}
	}
	return nil
}
