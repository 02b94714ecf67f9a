package tsdb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// deleteModel is what a DB holds: every ingested sample minus deletions.
type deleteModel struct {
	lsets   []labels.Labels
	samples map[string][]sample
}

func newDeleteModel(lsets []labels.Labels, rounds int) *deleteModel {
	m := &deleteModel{lsets: lsets, samples: map[string][]sample{}}
	for i, l := range lsets {
		for r := 0; r < rounds; r++ {
			m.samples[l.String()] = append(m.samples[l.String()], sample{int64(r) * 15000, scrapeValue(i, r)})
		}
	}
	return m
}

func (m *deleteModel) delete(mint, maxt int64, ms []*labels.Matcher) {
	for _, l := range m.lsets {
		if !labels.MatchLabels(l, ms...) {
			continue
		}
		key := l.String()
		m.samples[key] = slices.DeleteFunc(m.samples[key], func(s sample) bool { return s.T >= mint && s.T <= maxt })
		if len(m.samples[key]) == 0 {
			delete(m.samples, key)
		}
	}
}

// check compares the DB's data with the model, sample by sample.
func (m *deleteModel) check(t *testing.T, db *DB, what string) {
	t.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	got := querySamples(t, q)
	require.Equal(t, len(m.samples), len(got), "%s: number of series", what)
	for key, want := range m.samples {
		g := got[key]
		require.Equal(t, len(want), len(g), "%s: samples of %s", what, key)
		for i := range want {
			if g[i].T != want[i].T || math.Float64bits(g[i].V) != math.Float64bits(want[i].V) {
				t.Fatalf("%s: %s sample %d = %v, want %v", what, key, i, g[i], want[i])
			}
		}
	}
}

// randomDelete returns a random time range and matchers for a delete.
func randomDelete(rng *rand.Rand, lsets []labels.Labels, rounds int) (int64, int64, []*labels.Matcher) {
	span := int64(rounds) * 15000
	mint := rng.Int64N(span) - 15000
	maxt := mint + rng.Int64N(span/3)
	l := lsets[rng.IntN(len(lsets))]
	var ms []*labels.Matcher
	switch rng.IntN(3) {
	case 0: // one series
		l.Range(func(lb labels.Label) { ms = append(ms, labels.MustNewMatcher(labels.MatchEqual, lb.Name, lb.Value)) })
	case 1: // a metric
		ms = []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, l.Get(labels.MetricName))}
	default: // an instance, through a regexp
		ms = []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "instance", l.Get("instance")+"|nothing")}
	}
	return mint, maxt, ms
}

// TestDeleteModel: random deletes on the head
// and on blocks, checked against a model before and after compaction and
// before and after a restart.
func TestDeleteModel(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			const rounds = 6 * 240 // 6 hours
			lsets := loadSeries(t, 1000)[:100]
			for i := range lsets { // spread the 100 series over 4 instances
				lsets[i] = labels.NewBuilder(lsets[i]).Set("instance", fmt.Sprint("host-", i%4)).Labels()
			}
			model := newDeleteModel(lsets, rounds)
			fsys := vfs.NewMemFS()
			o := DefaultOptions()
			o.FS = fsys
			db, err := Open("data", nil, nil, o)
			require.NoError(t, err)
			ingestScrapes(t, db, lsets, rounds)
			del := func(what string) {
				mint, maxt, ms := randomDelete(rng, lsets, rounds)
				require.NoError(t, db.Delete(ctx, mint, maxt, ms...), "seed %d", seed)
				model.delete(mint, maxt, ms)
				model.check(t, db, fmt.Sprintf("seed %d, %s delete [%d,%d] %v", seed, what, mint, maxt, ms))
			}
			for i := 0; i < 5; i++ {
				del("head")
			}
			require.NoError(t, db.Compact(ctx))
			require.NotEmpty(t, db.Blocks())
			model.check(t, db, "after compaction")
			for i := 0; i < 5; i++ {
				del("blocks")
			}
			require.NoError(t, db.Close())
			db, err = Open("data", nil, nil, o)
			require.NoError(t, err)
			model.check(t, db, "after restart")
			for i := 0; i < 3; i++ {
				del("after restart")
			}
			require.NoError(t, db.CleanTombstones(ctx))
			model.check(t, db, "after CleanTombstones")
			require.NoError(t, db.Close())
			db, err = Open("data", nil, nil, o)
			require.NoError(t, err)
			defer db.Close()
			model.check(t, db, "after CleanTombstones and restart")
		})
	}
}

func TestDeleteBadInput(t *testing.T) {
	db, _ := openTestDB(t, nil)
	require.ErrorIs(t, db.Delete(ctx, 0, 10), ErrInvalidDelete)
	require.ErrorIs(t, db.Delete(ctx, 10, 0, labels.MustNewMatcher(labels.MatchEqual, "a", "b")), ErrInvalidTimeRange)
}

// TestDeleteSnapshotIsolation: a querier keeps the deletions it started
// with.
func TestDeleteSnapshotIsolation(t *testing.T) {
	db, _ := openTestDB(t, nil)
	app := db.Appender(ctx)
	_, err := app.Append(0, seriesLabels(1), 10, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	before, err := db.Querier(0, 100)
	require.NoError(t, err)
	defer before.Close()
	require.NoError(t, db.Delete(ctx, 0, 100, labels.MustNewMatcher(labels.MatchEqual, "i", "1")))
	after, err := db.Querier(0, 100)
	require.NoError(t, err)
	defer after.Close()
	require.Len(t, querySamples(t, before), 1)
	require.Empty(t, querySamples(t, after))
}

// TestCleanTombstonesSize: CleanTombstones
// shrinks the blocks by the deleted fraction and changes no query result.
func TestCleanTombstonesSize(t *testing.T) {
	lsets := loadSeries(t, 400)
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	const rounds = 8 * 240
	ingestScrapes(t, db, lsets, rounds)
	require.NoError(t, db.Compact(ctx))
	blockBytes := func() (n int64) {
		for _, s := range db.blockSizes() {
			n += s
		}
		return n
	}
	var blockSamples uint64
	for _, b := range db.Blocks() {
		blockSamples += b.Stats.NumSamples
	}
	before := blockBytes()
	// Delete every sample of the metrics starting with a to g: about a
	// quarter of the series.
	some := labels.MustNewMatcher(labels.MatchRegexp, "__name__", "[a-g].*")
	require.NoError(t, db.Delete(ctx, math.MinInt64, math.MaxInt64, some))
	// meta.json counts the tombstones, in memory and on disk, as
	// Prometheus's tools expect.
	for _, m := range db.Blocks() {
		require.Positive(t, m.Stats.NumTombstones, "block %s", m.ULID)
		onDisk, err := readMeta(o.FS, filepath.Join("data", m.ULID.String()))
		require.NoError(t, err)
		require.Equal(t, m.Stats.NumTombstones, onDisk.Stats.NumTombstones)
	}
	q0, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	model := querySamples(t, q0)
	require.NoError(t, q0.Close())
	var kept uint64
	for _, ss := range model {
		for _, s := range ss {
			if s.T < db.headMint {
				kept++
			}
		}
	}
	require.NoError(t, db.CleanTombstones(ctx))
	after := blockBytes()
	wantRatio := float64(kept) / float64(blockSamples)
	gotRatio := float64(after) / float64(before)
	t.Logf("blocks: %d → %d bytes (%.3f); samples kept %.3f", before, after, gotRatio, wantRatio)
	require.InDelta(t, wantRatio, gotRatio, 0.1, "bytes shrink with the deleted fraction")
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	requireSameSamples(t, model, querySamples(t, q))
	for _, b := range db.Blocks() {
		require.Zero(t, b.Stats.NumTombstones)
	}
}

// TestSnapshotUnderLoad: with two writers
// committing whole scrapes, 20 snapshots each hold only whole scrapes and
// every scrape committed before the Snapshot call.
func TestSnapshotUnderLoad(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	o.MinBlockDuration = 20 * time.Minute // a few blocks get cut
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()

	const perScrape = 40
	var (
		stop      atomic.Bool
		wg        sync.WaitGroup
		committed [2]atomic.Int64 // scrapes committed per writer
		progress  [2]atomic.Int64
	)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 205 scrapes: enough for the 20 snapshots (10 apart), bounded so
			// that snapshots do not chase an ever-growing DB.
			for r := int64(1); !stop.Load() && r <= 205; r++ {
				for r > min(progress[0].Load(), progress[1].Load())+3 && !stop.Load() {
					time.Sleep(50 * time.Microsecond)
				}
				app := db.Appender(ctx)
				for i := 0; i < perScrape; i++ {
					l := labels.FromStrings(labels.MetricName, "snap", "w", fmt.Sprint(w), "i", fmt.Sprint(i))
					if _, err := app.Append(0, l, r*15000, float64(r)); !assert.NoError(t, err) {
						return
					}
				}
				if !assert.NoError(t, app.Commit()) {
					return
				}
				committed[w].Store(r)
				progress[w].Store(r)
				time.Sleep(200 * time.Microsecond) // scrapes take a while
			}
		}()
	}
	for n := 0; n < 20; n++ {
		for committed[0].Load() < int64(10*(n+1)) || committed[1].Load() < int64(10*(n+1)) {
			time.Sleep(50 * time.Microsecond)
		}
		if n%5 == 4 {
			require.NoError(t, db.Compact(ctx))
		}
		floor := [2]int64{committed[0].Load(), committed[1].Load()}
		dir := fmt.Sprintf("snapshots/%d", n)
		require.NoError(t, db.Snapshot(dir, true))
		counts := map[string]int{}
		sdb, err := Open(dir, nil, nil, &Options{FS: fsys, NoWAL: true})
		require.NoError(t, err)
		q, err := sdb.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		for key, ss := range querySamples(t, q) {
			for _, s := range ss {
				counts[fmt.Sprintf("%s@%d", seriesWriter(key), s.T)]++
			}
		}
		require.NoError(t, q.Close())
		require.NoError(t, sdb.Close())
		for key, c := range counts {
			require.Equal(t, perScrape, c, "snapshot %d: samples of scrape %s", n, key)
		}
		for w := 0; w < 2; w++ {
			for r := int64(1); r <= floor[w]; r++ {
				require.NotZero(t, counts[fmt.Sprintf("%d@%d", w, r*15000)],
					"snapshot %d: writer %d scrape %d committed before the call is missing", n, w, r)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
}

// seriesWriter extracts the w label from a series string of the snapshot
// test.
func seriesWriter(key string) string {
	i := len(`{__name__="snap", i="`)
	for key[i] != '"' {
		i++
	}
	return key[i+len(`", w="`) : i+len(`", w="`)+1]
}

func TestSnapshotBadInput(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, _ := openTestDB(t, &Options{FS: fsys})
	require.ErrorIs(t, db.Snapshot(filepath.Join("data", "snap"), true), ErrInvalidSnapshotDir)
	require.NoError(t, fsys.MkdirAll("full/x", 0o777))
	require.ErrorIs(t, db.Snapshot("full", true), ErrInvalidSnapshotDir)
	require.NoError(t, fsys.MkdirAll("empty", 0o777))
	require.NoError(t, db.Snapshot("empty", true), "an empty directory is fine")
	require.NoError(t, db.Snapshot(filepath.Join("data", "snapshots", "s1"), true), "data/snapshots/ is Prometheus's place for them")
}
