package tsdb

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// advBase is a closed, fully synced DB on a MemFS used as the starting
// point of the adversarial tests: a few blocks, head data in the WAL, a
// checkpoint. Built once per test binary; every test works on a Crash()
// copy.
type advBase struct {
	fs     *vfs.MemFS
	blocks []BlockMeta
	want   map[string][]sample // everything a full query returns
	lsets  []labels.Labels
}

var (
	advOnce sync.Once
	advData advBase
)

// advSeriesCount and advRounds size the base DB: 7 h of 15 s scrapes of
// 6 series make two 2 h blocks plus a head.
const (
	advSeriesCount = 6
	advRounds      = 7 * 240
)

func advBaseDB(t *testing.T) advBase {
	t.Helper()
	advOnce.Do(func() {
		fsys := vfs.NewMemFS()
		o := DefaultOptions()
		o.FS = fsys
		db, err := Open("data", nil, nil, o)
		require.NoError(t, err)
		lsets := loadSeries(t, advSeriesCount)
		ingestScrapes(t, db, lsets, advRounds)
		require.NoError(t, db.Compact(ctx))
		blocks := db.Blocks()
		require.GreaterOrEqual(t, len(blocks), 2)
		require.NoError(t, db.Close())
		// Some commits after the checkpoint, so WAL segments hold data,
		// and the head is due for compaction. Written with a block range
		// so large that no background compaction starts: the base is the
		// same at every run.
		db, err = openAdv(fsys, func(o *Options) { o.MinBlockDuration = 100 * time.Hour })
		require.NoError(t, err)
		for r := advRounds; r < advRounds+40; r++ {
			app := db.Appender(ctx)
			for i, l := range lsets {
				_, err := app.Append(0, l, int64(r)*15000, scrapeValue(i, r))
				require.NoError(t, err)
			}
			require.NoError(t, app.Commit())
		}
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		want := querySamples(t, q)
		require.NoError(t, q.Close())
		require.NoError(t, db.Close())
		fsys.SyncAll()
		advData = advBase{fs: fsys, blocks: blocks, want: want, lsets: lsets}
	})
	require.NotNil(t, advData.fs, "base DB could not be built")
	return advData
}

// openAdv opens dir on fsys with default options.
func openAdv(fsys vfs.FS, opts func(*Options)) (*DB, error) {
	o := DefaultOptions()
	o.FS = fsys
	if opts != nil {
		opts(o)
	}
	return Open("data", nil, nil, o)
}

// fullQuery returns everything a full-range query returns, and the first
// error of the series set (iterator errors included) instead of failing.
func fullQuery(db *DB) (map[string][]sample, error) {
	return queryFrom(db, math.MinInt64)
}

// queryFrom is fullQuery over [mint, MaxInt64].
func queryFrom(db *DB, mint int64) (map[string][]sample, error) {
	q, err := db.Querier(mint, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	out := map[string][]sample{}
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+"))
	for ss.Next() {
		s := ss.At()
		it := s.Iterator(nil)
		var got []sample
		for it.Next() != chunks.ValNone {
			ts, v := it.At()
			got = append(got, sample{ts, v})
		}
		if err := it.Err(); err != nil {
			return out, err
		}
		if len(got) > 0 {
			out[s.Labels().String()] = got
		}
	}
	return out, ss.Err()
}

// withoutRange returns want without the samples in [mint, maxt).
func withoutRange(want map[string][]sample, mint, maxt int64) map[string][]sample {
	out := map[string][]sample{}
	for k, ss := range want {
		var keep []sample
		for _, s := range ss {
			if s.T < mint || s.T >= maxt {
				keep = append(keep, s)
			}
		}
		if len(keep) > 0 {
			out[k] = keep
		}
	}
	return out
}

// sameData reports whether two query results are equal bit by bit.
func sameData(a, b map[string][]sample) bool {
	if len(a) != len(b) {
		return false
	}
	for k, as := range a {
		bs, ok := b[k]
		if !ok || len(as) != len(bs) {
			return false
		}
		for i := range as {
			if as[i].T != bs[i].T || math.Float64bits(as[i].V) != math.Float64bits(bs[i].V) {
				return false
			}
		}
	}
	return true
}
