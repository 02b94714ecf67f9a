package tsdb

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestCommitGroupAllKinds: a commit with float and histogram samples,
// metadata and an exemplar is one commit group in the WAL (samples, then
// metadata, then exemplars) and replays whole; cut at any record boundary
// inside the group, the log replays none of it — not its samples, its
// metadata nor its exemplar — and the commit before it whole.
func TestCommitGroupAllKinds(t *testing.T) {
	base := vfs.NewMemFS()
	db, err := Open("data", nil, nil, exemplarOpts(base, 10))
	require.NoError(t, err)
	a, h := labels.FromStrings("__name__", "a"), labels.FromStrings("__name__", "h")
	gauge := Metadata{Type: MetricTypeGauge, Help: "A."}
	hist := Metadata{Type: MetricTypeHistogram, Unit: "seconds", Help: "H."}

	app := db.Appender(context.Background())
	ra, err := app.Append(0, a, 10, 1)
	require.NoError(t, err)
	_, err = app.UpdateMetadata(ra, a, gauge)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	app = db.Appender(context.Background())
	_, err = app.Append(ra, a, 20, 2)
	require.NoError(t, err)
	rh, err := app.AppendHistogram(0, h, 20, testHistogram(1), nil)
	require.NoError(t, err)
	_, err = app.UpdateMetadata(rh, h, hist)
	require.NoError(t, err)
	_, err = app.UpdateMetadata(ra, a, Metadata{Type: MetricTypeCounter, Help: "A."})
	require.NoError(t, err)
	_, err = app.AppendExemplar(ra, a, ex("t1", 2, 20))
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())

	require.Equal(t, []record.Type{
		record.Series, record.CommitGroup, record.Samples, record.Metadata,
		record.Series, record.CommitGroup, record.Samples, record.HistogramSamples, record.Metadata, record.Exemplars,
	}, walRecordTypes(t, base))

	var seg string
	var data []byte
	for _, s := range walSegments(t, base) {
		if b, err := base.ReadFile(s); err == nil && len(b) > 0 {
			seg, data = s, b
		}
	}
	var ends []int64
	r := wlog.NewReader(bytes.NewReader(data))
	for r.Next() {
		ends = append(ends, r.Offset())
	}
	require.NoError(t, r.Err())
	require.Len(t, ends, 10)

	// state reads back what a DB opened on fsys holds.
	type state struct {
		samples   map[string][]sample
		metaA     Metadata
		metaH     bool
		exemplars []string
	}
	read := func(fsys vfs.FS) state {
		t.Helper()
		db, err := Open("data", nil, nil, exemplarOpts(fsys, 10))
		require.NoError(t, err)
		defer func() { require.NoError(t, db.Close()) }()
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		defer q.Close()
		var st state
		st.samples = querySamples(t, q)
		st.metaA, _, err = q.SeriesMetadata(a)
		require.NoError(t, err)
		_, st.metaH, err = q.SeriesMetadata(h)
		require.NoError(t, err)
		st.exemplars = exemplarTraces(allExemplars(t, db))
		return st
	}

	whole := read(base)
	require.Equal(t, []sample{{10, 1}, {20, 2}}, whole.samples[`{__name__="a"}`])
	require.Len(t, whole.samples[`{__name__="h"}`], 1)
	require.Equal(t, MetricTypeCounter, whole.metaA.Type)
	require.True(t, whole.metaH)
	require.Equal(t, []string{`{__name__="a"}: t1@20=2`}, whole.exemplars)

	// Cut after the first commit's group and after each record of the
	// second's but its last.
	for _, off := range ends[3:9] {
		t.Run(fmt.Sprintf("cut at %d", off), func(t *testing.T) {
			fs2 := base.Crash()
			require.NoError(t, fs2.WriteFile(seg, slices.Clone(data[:off]), 0o666))
			fs2.SyncAll()
			st := read(fs2)
			require.Equal(t, map[string][]sample{`{__name__="a"}`: {{10, 1}}}, st.samples, "none of the torn commit's samples")
			require.Equal(t, gauge, st.metaA, "the torn commit's metadata is not applied")
			require.False(t, st.metaH)
			require.Empty(t, st.exemplars, "the torn commit's exemplar is not stored")
		})
	}
}

// TestCommitLogsNewSeriesOnce: a commit with several samples, metadata
// and an exemplar of each of two new series logs each series once.
func TestCommitLogsNewSeriesOnce(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, exemplarOpts(fsys, 10))
	require.NoError(t, err)
	a, b := labels.FromStrings("__name__", "a"), labels.FromStrings("__name__", "b")
	app := db.Appender(context.Background())
	for ts := int64(1); ts <= 3; ts++ {
		for _, ls := range []labels.Labels{a, b} {
			_, err := app.Append(0, ls, ts, float64(ts))
			require.NoError(t, err)
		}
	}
	for _, ls := range []labels.Labels{b, a} {
		_, err = app.UpdateMetadata(0, ls, Metadata{Type: MetricTypeGauge})
		require.NoError(t, err)
		_, err = app.AppendExemplar(0, ls, ex("t", 1, 3))
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())

	var refs []uint64
	var dec record.Decoder
	for _, s := range walSegments(t, fsys) {
		data, err := fsys.ReadFile(s)
		require.NoError(t, err)
		r := wlog.NewReader(bytes.NewReader(data))
		for r.Next() {
			if record.RecordType(r.Record()) == record.Series {
				series, err := dec.Series(r.Record(), nil)
				require.NoError(t, err)
				for _, s := range series {
					refs = append(refs, s.Ref)
				}
			}
		}
		require.NoError(t, r.Err())
	}
	require.Len(t, refs, 2, "each new series logged once: %v", refs)
	require.NotEqual(t, refs[0], refs[1])
}
