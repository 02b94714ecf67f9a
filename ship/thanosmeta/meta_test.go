package thanosmeta

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/thanos-io/thanos/pkg/block/metadata"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/ship"
)

// writeBlocks writes 9 h of 4 series at 15 s into a new DB at dir and
// cuts its 2 h blocks (the head keeps the rest); it returns their metas.
func writeBlocks(t *testing.T, dir string) []tsdb.BlockMeta {
	t.Helper()
	o := tsdb.DefaultOptions()
	o.MaxBlockDuration = o.MinBlockDuration
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	ctx := context.Background()
	for ts := int64(0); ts < 9*3600*1000; ts += 15000 {
		app := db.Appender(ctx)
		for i := range 4 {
			_, err := app.Append(0, labels.FromStrings(labels.MetricName, "m", "i", fmt.Sprint(i)), ts, float64(ts))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	metas := db.Blocks()
	require.NoError(t, db.Close())
	return metas
}

// TestThanosParsesUploadedMeta ships blocks to a filesystem bucket and
// reads each uploaded meta.json with Thanos's metadata package, which
// validates it (version, the thanos section) as Thanos's store gateway
// and compactor do: the block's identity and the thanos section's
// external labels, source, resolution 0, segment files and files list
// (with their sizes) must be what the shipper was given and what the
// block holds.
func TestThanosParsesUploadedMeta(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	metas := writeBlocks(t, dir)
	require.GreaterOrEqual(t, len(metas), 2)
	bucketDir := t.TempDir()
	bkt, err := ship.NewBucket([]byte("type: FILESYSTEM\nconfig:\n  directory: "+bucketDir+"\n"), nil)
	require.NoError(t, err)
	defer bkt.Close()
	extLabels := map[string]string{"cluster": "eu1", "replica": "a"}
	s, err := ship.New(dir, bkt, &ship.Options{ExternalLabels: extLabels, Source: "sidecar"})
	require.NoError(t, err)
	n, err := s.Sync(context.Background())
	require.NoError(t, err)
	require.Equal(t, len(metas), n)

	for _, bm := range metas {
		id := bm.ULID.String()
		m, err := metadata.ReadFromDir(filepath.Join(bucketDir, id))
		require.NoError(t, err, id)
		require.Equal(t, id, m.ULID.String())
		require.Equal(t, bm.MinTime, m.MinTime)
		require.Equal(t, bm.MaxTime, m.MaxTime)
		require.Equal(t, metadata.TSDBVersion1, m.Version)
		require.Equal(t, extLabels, m.Thanos.Labels)
		require.Equal(t, metadata.SourceType("sidecar"), m.Thanos.Source)
		require.Zero(t, m.Thanos.Downsample.Resolution, "raw data: resolution 0")

		segs, err := os.ReadDir(filepath.Join(dir, id, "chunks"))
		require.NoError(t, err)
		require.NotEmpty(t, segs)
		var wantSegs []string
		for _, e := range segs {
			wantSegs = append(wantSegs, e.Name())
		}
		require.Equal(t, wantSegs, m.Thanos.SegmentFiles, id)

		var rels []string
		for _, f := range m.Thanos.Files {
			rels = append(rels, f.RelPath)
			if f.RelPath == "meta.json" {
				continue
			}
			fi, err := os.Stat(filepath.Join(dir, id, filepath.FromSlash(f.RelPath)))
			require.NoError(t, err, f.RelPath)
			require.Equal(t, fi.Size(), f.SizeBytes, f.RelPath)
		}
		require.True(t, slices.IsSorted(rels), "files sorted by path: %v", rels)
		require.Subset(t, rels, []string{"index", "meta.json", "chunks/" + wantSegs[0]})
	}
}
