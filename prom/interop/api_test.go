package interop

import (
	"context"

	"github.com/isotsdb/tsdb"
	ourlabels "github.com/isotsdb/tsdb/labels"
)

// The isotsdb calls the tests make beyond the core API, in one place: if
// one changes, this file is what to adapt.

// isotsdbDelete deletes [mint, maxt] of the series matching ms.
func isotsdbDelete(ctx context.Context, db *tsdb.DB, mint, maxt int64, ms ...*ourlabels.Matcher) error {
	return db.Delete(ctx, mint, maxt, ms...)
}

// isotsdbSnapshot writes a snapshot of db into dir.
func isotsdbSnapshot(db *tsdb.DB, dir string, withHead bool) error {
	return db.Snapshot(dir, withHead)
}
