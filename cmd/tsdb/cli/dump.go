package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
)

// dumpConfig is the command line of "tsdb dump".
type dumpConfig struct {
	dir              string
	matches          []string // selectors; a series matching any is dumped
	minTime, maxTime int64    // inclusive range, milliseconds
	// staleAsNaN prints stale markers as promtool does, indistinguishable
	// from a NaN value; by default they print as "stale".
	staleAsNaN bool
}

// runDump prints the samples of the series matching the selectors (all
// series without one) in [minTime, maxTime], one "{labels} value
// timestamp" line per sample, series in label order. The lines are those
// of promtool tsdb dump's default format: a float as %g prints it, a
// native histogram (integer or float) in Prometheus's notation
// (histogram.Histogram.String). One difference: a stale marker (package
// value), float or histogram, prints as "stale", where promtool prints
// "NaN" and "{count:0, sum:NaN}", the same as a measured NaN and a
// histogram with a NaN sum; with cfg.staleAsNaN the lines are promtool's
// exactly. (promtool's other formats, OpenMetrics and label sets as JSON,
// print no histogram; tsdb dump has only this one.)
func runDump(ctx context.Context, cfg dumpConfig, stdout, stderr io.Writer) int {
	var sets [][]*labels.Matcher
	for _, s := range cfg.matches {
		ms, err := labels.ParseSelector(s)
		if err != nil {
			fmt.Fprintf(stderr, "tsdb dump: --match %q: %v\n", s, err)
			return exitUsage
		}
		sets = append(sets, ms)
	}
	if cfg.minTime > cfg.maxTime {
		fmt.Fprintf(stderr, "tsdb dump: --min-time %d is after --max-time %d\n", cfg.minTime, cfg.maxTime)
		return exitUsage
	}
	db, err := openReadOnly(cfg.dir, stderr)
	if err != nil {
		return reportError(stderr, "dump", err)
	}
	defer db.Close()
	q, err := db.Querier(cfg.minTime, cfg.maxTime)
	if err != nil {
		return reportError(stderr, "dump", err)
	}
	defer q.Close()

	var ss tsdb.SeriesSet
	if len(sets) == 0 {
		ss = q.Select(ctx)
	} else {
		all := make([]tsdb.SeriesSet, len(sets))
		for i, ms := range sets {
			all[i] = q.Select(ctx, ms...)
		}
		ss = newUnionSeriesSet(all)
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	if err := writeSamples(out, ss, cfg.staleAsNaN); err != nil {
		return reportError(stderr, "dump", err)
	}
	if err := out.Flush(); err != nil {
		return reportError(stderr, "dump", err)
	}
	return exitOK
}

// staleValue is how dump prints a stale marker unless told to print it as
// promtool does.
const staleValue = "stale"

// writeSamples writes every sample of ss as "{labels} value timestamp";
// strconv's shortest 'g' format is what fmt's %g prints. A stale marker's
// value is staleValue unless staleAsNaN.
func writeSamples(out *bufio.Writer, ss tsdb.SeriesSet, staleAsNaN bool) error {
	var (
		it  chunks.Iterator
		buf []byte
		h   *histogram.Histogram
		fh  *histogram.FloatHistogram
	)
	for ss.Next() {
		s := ss.At()
		prefix := s.Labels().String() + " "
		it = s.Iterator(it)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			buf = append(buf[:0], prefix...)
			switch vt {
			case chunks.ValFloat:
				_, v := it.At()
				if !staleAsNaN && value.IsStaleNaN(v) {
					buf = append(buf, staleValue...)
				} else {
					buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
				}
			case chunks.ValHistogram:
				_, h = it.AtHistogram(h)
				if !staleAsNaN && value.IsStaleNaN(h.Sum) {
					buf = append(buf, staleValue...)
				} else {
					buf = append(buf, h.String()...)
				}
			default:
				_, fh = it.AtFloatHistogram(fh)
				if !staleAsNaN && value.IsStaleNaN(fh.Sum) {
					buf = append(buf, staleValue...)
				} else {
					buf = append(buf, fh.String()...)
				}
			}
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, it.AtT(), 10)
			buf = append(buf, '\n')
			if _, err := out.Write(buf); err != nil {
				return err
			}
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("%s: %w", s.Labels(), err)
		}
	}
	return ss.Err()
}

// unionSeriesSet merges series sets sorted by labels into one, sorted,
// with each label set once. Sets selected from one Querier hold the same
// data for the same labels, so the first of equal series is taken.
type unionSeriesSet struct {
	sets []tsdb.SeriesSet
	ok   []bool // sets[i] is positioned on a series
	cur  tsdb.Series
	err  error
}

func newUnionSeriesSet(sets []tsdb.SeriesSet) *unionSeriesSet {
	u := &unionSeriesSet{sets: sets, ok: make([]bool, len(sets))}
	for i, s := range sets {
		u.ok[i] = s.Next()
	}
	return u
}

// Next implements tsdb.SeriesSet.
func (u *unionSeriesSet) Next() bool {
	if u.err != nil {
		return false
	}
	best := -1
	for i, s := range u.sets {
		if u.ok[i] && (best < 0 || labels.Compare(s.At().Labels(), u.sets[best].At().Labels()) < 0) {
			best = i
		}
	}
	if best < 0 {
		for _, s := range u.sets {
			if err := s.Err(); err != nil {
				u.err = err
				break
			}
		}
		return false
	}
	u.cur = u.sets[best].At()
	lset := u.cur.Labels()
	for i, s := range u.sets {
		if u.ok[i] && labels.Equal(s.At().Labels(), lset) {
			u.ok[i] = s.Next()
		}
	}
	return true
}

// At implements tsdb.SeriesSet.
func (u *unionSeriesSet) At() tsdb.Series { return u.cur }

// Err implements tsdb.SeriesSet.
func (u *unionSeriesSet) Err() error { return u.err }

// timeValue is a flag holding a millisecond timestamp, given as
// milliseconds since the epoch or in RFC 3339 form.
type timeValue struct{ p *int64 }

// Set implements kingpin.Value.
func (v timeValue) Set(s string) error {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		*v.p = ms
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("want milliseconds since the epoch or an RFC 3339 time, not %q", s)
	}
	*v.p = t.UnixMilli()
	return nil
}

// String implements kingpin.Value.
func (v timeValue) String() string { return strconv.FormatInt(*v.p, 10) }

// Default bounds of dump's range.
var (
	minTimeFlag = strconv.FormatInt(math.MinInt64, 10)
	maxTimeFlag = strconv.FormatInt(math.MaxInt64, 10)
)
