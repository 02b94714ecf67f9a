package ship

import (
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/thanos-io/objstore"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/ship/shiptest"
)

// e2eSpec is the data of the S3 tests: 9 h of 300 series, four 2 h
// blocks and the rest in the head.
var e2eSpec = blockSpec{series: 300, hours: 9}

// downloadBlocks copies every block of bkt (every top-level directory
// with a meta.json) to dst and returns their ULIDs.
func downloadBlocks(t *testing.T, bkt objstore.Bucket, dst string) []ulid.ULID {
	t.Helper()
	ctx := context.Background()
	var ids []ulid.ULID
	for _, name := range bucketFiles(t, bkt) {
		if id, ok := strings.CutSuffix(name, "/"+metaFilename); ok {
			ids = append(ids, ulid.MustParseStrict(id))
		}
		r, err := bkt.Get(ctx, name)
		require.NoError(t, err)
		p := filepath.Join(dst, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o777))
		f, err := os.Create(p)
		require.NoError(t, err)
		_, err = io.Copy(f, r)
		r.Close()
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	return ids
}

// requireWholeBlocks checks that every block with a meta.json in bkt has
// all the files its thanos.files lists, at their sizes: no reader ever
// sees a partial block.
func requireWholeBlocks(t *testing.T, bkt objstore.Bucket) (blocks int) {
	t.Helper()
	ctx := context.Background()
	for _, name := range bucketFiles(t, bkt) {
		id, ok := strings.CutSuffix(name, "/"+metaFilename)
		if !ok {
			continue
		}
		blocks++
		m := readBucketMeta(t, bkt, ulid.MustParseStrict(id))
		require.NotEmpty(t, m.Thanos.Files, id)
		for _, f := range m.Thanos.Files {
			attrs, err := bkt.Attributes(ctx, path.Join(id, f.RelPath))
			require.NoError(t, err, "block %s has meta.json but not %s", id, f.RelPath)
			if f.RelPath != metaFilename {
				require.Equal(t, f.SizeBytes, attrs.Size, "%s/%s", id, f.RelPath)
			}
		}
	}
	return blocks
}

// TestS3EndToEnd ships blocks to SeaweedFS, downloads them and checks
// that isotsdb reads back exactly the samples of the source blocks.
func TestS3EndToEnd(t *testing.T) {
	w := startWeed(t)
	dir := testDataDir(t, e2eSpec)
	blocks := localBlocks(t, dir)
	require.GreaterOrEqual(t, len(blocks), 3)

	bkt := &recordingBucket{Bucket: w.bucket("blocks")}
	s, err := New(dir, bkt, &Options{ExternalLabels: map[string]string{"cluster": "e2e"}})
	require.NoError(t, err)
	start := time.Now()
	n, err := s.Sync(context.Background())
	elapsed := time.Since(start)
	require.NoError(t, err)
	require.Equal(t, len(blocks), n)
	bytes := testutil.ToFloat64(s.metrics.bytesUploaded)
	t.Logf("uploaded %d blocks, %.1f MB in %s: %.1f MB/s to SeaweedFS on loopback",
		n, bytes/1e6, elapsed.Round(time.Millisecond), bytes/1e6/elapsed.Seconds())
	require.Equal(t, len(blocks), requireWholeBlocks(t, bkt))

	// Read the bucket back and open the blocks with isotsdb.
	got := filepath.Join(t.TempDir(), "downloaded")
	ids := downloadBlocks(t, bkt, got)
	require.Len(t, ids, len(blocks))
	dl, err := tsdb.OpenReadOnly(got, nil, nil)
	require.NoError(t, err)
	defer dl.Close()
	require.Len(t, dl.Blocks(), len(blocks))

	// The source: the same blocks, without the head.
	src := filepath.Join(t.TempDir(), "source")
	for _, b := range blocks {
		copyDir(t, blockDir(dir, b), filepath.Join(src, b.meta.ULID.String()))
	}
	sdb, err := tsdb.OpenReadOnly(src, nil, nil)
	require.NoError(t, err)
	defer sdb.Close()
	want, have := dumpDB(t, sdb), dumpDB(t, dl)
	require.Len(t, want, e2eSpec.series)
	samples := 0
	for k, ws := range want {
		require.Equal(t, ws, have[k], k)
		samples += len(ws)
	}
	require.Equal(t, len(want), len(have))
	require.Equal(t, int(blocks[len(blocks)-1].meta.MaxTime/15000)*e2eSpec.series, samples)

	// A restart of the shipper uploads nothing.
	before := len(bkt.uploaded())
	s2, err := New(dir, bkt, nil)
	require.NoError(t, err)
	n, err = s2.Sync(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, bkt.uploaded(), before)
}

// killingBucket kills the server when the upload number killAt starts,
// after part of its body went out, so the server dies mid-upload.
type killingBucket struct {
	objstore.Bucket
	w      *weedServer
	killAt int64
	n      atomic.Int64
	once   sync.Once
}

func (b *killingBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	if b.n.Add(1) == b.killAt {
		r = &killReader{r: r.(sizedReader), kill: func() { b.once.Do(b.w.Kill) }}
	}
	return b.Bucket.Upload(ctx, name, r, opts...)
}

// killReader kills the server once the first bytes of the body are read.
type killReader struct {
	r    sizedReader
	kill func()
	read int64
}

func (k *killReader) Read(p []byte) (int, error) {
	if k.read > 0 {
		k.kill()
	}
	n, err := k.r.Read(p[:min(len(p), 4096)])
	k.read += int64(n)
	return n, err
}

func (k *killReader) ObjectSize() (int64, error) { return k.r.ObjectSize() }

// TestS3KillMidUpload: the S3 server is killed (SIGKILL) while a block
// uploads. The bucket never shows that block with meta.json unless all of
// its files are there; after the server restarts on the same directory
// the next Sync ships the rest, and nothing shipped is uploaded twice,
// even by a restarted shipper.
func TestS3KillMidUpload(t *testing.T) {
	w := startWeed(t)
	dir := testDataDir(t, e2eSpec)
	blocks := localBlocks(t, dir)
	require.GreaterOrEqual(t, len(blocks), 3)

	files, err := openBlockFiles(blockDir(dir, blocks[0]))
	require.NoError(t, err)
	perBlock := int64(len(files)) + 1 // and meta.json
	closeBlockFiles(files)

	inner := w.bucket("blocks")
	// Kill during the index upload of the second block.
	kb := &killingBucket{Bucket: inner, w: w, killAt: perBlock + perBlock - 1 - 1}
	bkt := &recordingBucket{Bucket: kb}
	opts := &Options{Backoff: Backoff{Min: 50 * time.Millisecond, Max: 100 * time.Millisecond, Attempts: 2}}
	s, err := New(dir, bkt, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	syncStart := time.Now()
	n, err := s.Sync(ctx)
	t.Logf("Sync with the kill took %s: %v", time.Since(syncStart).Round(time.Millisecond), err)
	require.ErrorIs(t, err, ErrSync)
	require.Equal(t, 1, n, "the block before the kill")
	require.False(t, s.Shipped(blocks[1].meta.ULID))
	require.True(t, s.KeepBlock(blocks[1].meta))

	// Restart the server on the same directory and ports.
	restart := time.Now()
	w.Start()
	waitUp(t, inner)
	w.WarmUp(shiptest.Bucket)
	t.Logf("server restarted in %s", time.Since(restart).Round(time.Millisecond))
	require.Equal(t, 1, requireWholeBlocks(t, inner), "only the block shipped before the kill is visible")

	// A restarted shipper finishes the job.
	s2, err := New(dir, bkt, opts)
	require.NoError(t, err)
	syncStart = time.Now()
	n, err = s2.Sync(ctx)
	t.Logf("Sync after the restart took %s", time.Since(syncStart).Round(time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, len(blocks)-1, n)
	require.Equal(t, len(blocks), requireWholeBlocks(t, inner))

	// Nothing uploaded twice: meta.json once per block, and no file of
	// the block shipped before the kill again.
	seen := map[string]int{}
	for _, name := range bkt.uploaded() {
		seen[name]++
	}
	for _, b := range blocks {
		require.Equal(t, 1, seen[path.Join(b.meta.ULID.String(), metaFilename)], b.meta.ULID)
	}
	for name, c := range seen {
		if strings.HasPrefix(name, blocks[0].meta.ULID.String()) {
			require.Equal(t, 1, c, name)
		}
	}
	s3, err := New(dir, bkt, opts)
	require.NoError(t, err)
	before := len(bkt.uploaded())
	n, err = s3.Sync(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, bkt.uploaded(), before)
}

// BenchmarkUploadSeaweedFS measures shipping to SeaweedFS on loopback:
// each iteration uploads every block of the data directory under a new
// prefix. Bytes per op are the block files and meta.json.
func BenchmarkUploadSeaweedFS(b *testing.B) {
	w := startWeed(b)
	dir := b.TempDir()
	makeBlocks(b, dir, blockSpec{series: 2000, hours: 9})
	bkt := w.bucket("blocks")
	var total int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		require.NoError(b, os.RemoveAll(filepath.Join(dir, ShipperFile)))
		s, err := New(dir, objstore.NewPrefixedBucket(bkt, "run"+strconv.Itoa(i)), nil)
		require.NoError(b, err)
		b.StartTimer()
		_, err = s.Sync(context.Background())
		require.NoError(b, err)
		total = int64(testutil.ToFloat64(s.metrics.bytesUploaded))
	}
	b.SetBytes(total)
	b.ReportMetric(float64(total)/1e6, "MB/op")
}
