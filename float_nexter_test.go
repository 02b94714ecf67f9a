package tsdb

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// stepped is one step of an iterator: its type, and for a float its time
// and value.
type stepped struct {
	vt chunks.ValueType
	t  int64
	v  float64
}

// TestFloatNexterMatchesNext: NextFloat steps through the same samples as
// Next, with the values At reports, for the head's iterators (XOR chunks
// read in place, XOR2 chunks with start times, histograms between
// floats), the blocks' and the merge of both.
func TestFloatNexterMatchesNext(t *testing.T) {
	const hour = int64(3600_000)
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	series := []struct {
		name   string
		append func(app Appender, l labels.Labels, i int, ts int64) error
	}{
		{"plain", func(app Appender, l labels.Labels, i int, ts int64) error {
			_, err := app.Append(0, l, ts, float64(i))
			return err
		}},
		{"start_times", func(app Appender, l labels.Labels, i int, ts int64) error {
			_, err := app.AppendST(0, l, ts-1000-int64(i%7), ts, float64(i)*1.5, nil, nil)
			return err
		}},
		{"mixed", func(app Appender, l labels.Labels, i int, ts int64) error {
			var err error
			switch i / 50 % 3 {
			case 0:
				_, err = app.Append(0, l, ts, float64(i))
			case 1:
				_, err = app.AppendHistogram(0, l, ts, crashHistogram(i), nil)
			default:
				_, err = app.AppendST(0, l, ts-500, ts, -float64(i), nil, nil)
			}
			return err
		}},
	}
	// Five hours at 15 s: two 2 h blocks and the head.
	for i := 0; i < 5*3600/15; i++ {
		app := db.Appender(ctx)
		for _, s := range series {
			require.NoError(t, s.append(app, labels.FromStrings("s", s.name), i, int64(i)*15_000))
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())

	for _, r := range []struct {
		name       string
		mint, maxt int64
	}{
		{"block", 10 * 60_000, hour},        // one block
		{"head", 4*hour + 60_000, 5 * hour}, // the head
		{"all", math.MinInt64, math.MaxInt64},
	} {
		for _, s := range series {
			t.Run(fmt.Sprintf("%s/%s", r.name, s.name), func(t *testing.T) {
				read := func(step func(it chunks.Iterator) (stepped, bool)) []stepped {
					q, err := db.Querier(r.mint, r.maxt)
					require.NoError(t, err)
					defer q.Close()
					ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, "s", s.name))
					require.True(t, ss.Next())
					it := ss.At().Iterator(nil)
					var out []stepped
					for {
						st, ok := step(it)
						if !ok {
							break
						}
						out = append(out, st)
					}
					require.NoError(t, it.Err())
					require.False(t, ss.Next())
					return out
				}
				want := read(func(it chunks.Iterator) (stepped, bool) {
					vt := it.Next()
					if vt != chunks.ValFloat {
						return stepped{vt: vt}, vt != chunks.ValNone
					}
					ts, v := it.At()
					return stepped{vt, ts, v}, true
				})
				got := read(func(it chunks.Iterator) (stepped, bool) {
					nf, ok := it.(chunks.FloatNexter)
					require.True(t, ok, "%T is no chunks.FloatNexter", it)
					vt, ts, v := nf.NextFloat()
					if vt != chunks.ValFloat {
						return stepped{vt: vt}, vt != chunks.ValNone
					}
					return stepped{vt, ts, v}, true
				})
				require.NotEmpty(t, want)
				require.Equal(t, want, got)
			})
		}
	}
}
