package web

import (
	"context"
	"math"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// FromDB adapts db to AdminDB.
//
// HeadSeries queries the head's time range, so it lists the head's series
// that have samples (and, in the moment between a head compaction and the
// head's truncation, the series of the block just cut from it). The head
// does not report its chunk count: ChunkCount is -1.
func FromDB(db *tsdb.DB) AdminDB { return dbAdapter{db} }

// dbAdapter is the AdminDB of a *tsdb.DB.
type dbAdapter struct{ db *tsdb.DB }

// Dir implements AdminDB.
func (a dbAdapter) Dir() string { return a.db.Dir() }

// Delete implements AdminDB.
func (a dbAdapter) Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error {
	return a.db.Delete(ctx, mint, maxt, ms...)
}

// CleanTombstones implements AdminDB.
func (a dbAdapter) CleanTombstones(ctx context.Context) error { return a.db.CleanTombstones(ctx) }

// Snapshot implements AdminDB.
func (a dbAdapter) Snapshot(dir string, withHead bool) error { return a.db.Snapshot(dir, withHead) }

// HeadStats implements AdminDB.
func (a dbAdapter) HeadStats() HeadStats {
	h := a.db.Head()
	return HeadStats{NumSeries: uint64(max(h.NumSeries(), 0)), MinTime: h.MinTime(), MaxTime: h.MaxTime(), ChunkCount: -1}
}

// HeadSeries implements AdminDB.
func (a dbAdapter) HeadSeries(ctx context.Context, f func(labels.Labels) error) error {
	h := a.db.Head()
	mint, maxt := h.MinTime(), h.MaxTime()
	if h.NumSeries() == 0 || mint == math.MaxInt64 || mint > maxt {
		return nil
	}
	q, err := a.db.Querier(mint, maxt)
	if err != nil {
		return err
	}
	defer q.Close()
	ss := q.Select(ctx)
	for ss.Next() {
		if err := f(ss.At().Labels()); err != nil {
			return err
		}
	}
	return ss.Err()
}
