package web

import (
	"context"

	"github.com/isotsdb/tsdb/labels"
)

// AdminDB is what the handler needs of a database. Its methods may be
// called concurrently, by as many requests as the server serves at once.
// FromDB adapts a *tsdb.DB; tests can use a fake.
type AdminDB interface {
	// Dir returns the data directory. Snapshots go into its snapshots
	// subdirectory unless Options.SnapshotDir says otherwise.
	Dir() string
	// Delete marks the samples in [mint, maxt] (milliseconds, inclusive)
	// of the series matching all of ms as deleted.
	Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error
	// CleanTombstones rewrites the blocks that have deletions without the
	// deleted data.
	CleanTombstones(ctx context.Context) error
	// Snapshot writes a copy of the database into dir, which does not
	// exist yet; withHead includes the data still in memory.
	Snapshot(dir string, withHead bool) error
	// HeadStats describes the in-memory head.
	HeadStats() HeadStats
	// HeadSeries calls f with the label set of every series of the head,
	// stopping at and returning the first error f returns.
	HeadSeries(ctx context.Context, f func(labels.Labels) error) error
}

// HeadStats describes the in-memory head of a database.
type HeadStats struct {
	NumSeries uint64
	// MinTime and MaxTime are the times of the head's oldest and newest
	// samples, in milliseconds.
	MinTime, MaxTime int64
	// ChunkCount is the number of chunks in the head, or -1 if the
	// database does not say.
	ChunkCount int64
}
