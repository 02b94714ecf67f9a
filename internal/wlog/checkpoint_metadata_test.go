package wlog

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestCheckpointMetadata: a checkpoint keeps the last metadata entry of
// each kept series (from the previous checkpoint and the segments), in
// Metadata records ordered by ref, and drops those of dropped series.
func TestCheckpointMetadata(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{SegmentSize: smallSegment})
	var enc record.Encoder
	var series []record.RefSeries
	for ref := uint64(1); ref <= 4; ref++ {
		series = append(series, record.RefSeries{Ref: ref, Labels: labels.FromStrings("__name__", "m", "r", string(rune('0'+ref)))})
	}
	md := func(ref uint64, help string) record.RefMetadata {
		return record.RefMetadata{Ref: ref, Type: record.MetricTypeCounter, Unit: "s", Help: help}
	}
	require.NoError(t, w.Log(enc.Series(series, nil),
		enc.Metadata([]record.RefMetadata{md(3, "old3"), md(1, "old1"), md(2, "only2")}, nil)))
	_, err := w.NextSegment()
	require.NoError(t, err)
	require.NoError(t, w.Log(enc.Metadata([]record.RefMetadata{md(1, "new1"), md(4, "only4")}, nil)))
	_, err = w.NextSegment()
	require.NoError(t, err)

	keep := func(ref uint64) bool { return ref != 4 }
	stats, err := Checkpoint(nil, fsys, w, 0, 1, keep, 0)
	require.NoError(t, err)
	require.Equal(t, 5, stats.TotalMetadata)
	require.Equal(t, 2, stats.DroppedMetadata, "old1 replaced, only4 of a dropped series")
	require.Zero(t, stats.DroppedRecords)

	got := checkpointMetadata(t, fsys)
	require.Equal(t, []record.RefMetadata{md(1, "new1"), md(2, "only2"), md(3, "old3")}, got)

	// The next checkpoint carries them over and takes newer entries.
	require.NoError(t, w.Log(enc.Metadata([]record.RefMetadata{md(3, "new3")}, nil)))
	_, err = w.NextSegment()
	require.NoError(t, err)
	require.NoError(t, w.Truncate(2))
	require.NoError(t, DeleteCheckpoints(fsys, testDir, 1))
	_, err = Checkpoint(nil, fsys, w, 2, 2, func(ref uint64) bool { return ref != 2 }, 0)
	require.NoError(t, err)
	require.Equal(t, []record.RefMetadata{md(1, "new1"), md(3, "new3")}, checkpointMetadata(t, fsys))
}

// checkpointMetadata returns the metadata entries of the last checkpoint,
// in record order, checking that each is in a Metadata record that comes
// after every other record.
func checkpointMetadata(t *testing.T, fsys vfs.FS) []record.RefMetadata {
	t.Helper()
	name, _, err := LastCheckpoint(fsys, testDir)
	require.NoError(t, err)
	recs, err := readAll(t, fsys, name)
	require.NoError(t, err)
	var dec record.Decoder
	var out []record.RefMetadata
	for _, rec := range recs {
		if record.RecordType(rec) != record.Metadata {
			require.Empty(t, out, "metadata records come last")
			continue
		}
		out, err = dec.Metadata(rec, out)
		require.NoError(t, err)
	}
	return out
}
