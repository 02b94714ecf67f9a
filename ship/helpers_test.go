package ship

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/thanos-io/objstore"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
)

// blockSpec says what data makeBlocks writes.
type blockSpec struct {
	series int
	hours  int
	// compact turns block compaction on (MaxBlockDuration 6h), so that
	// level-1 blocks are merged into level-2 ones.
	compact bool
}

// makeBlocks writes spec.series series, one float sample each 15 s over
// spec.hours hours of data time, into a new DB at dir, compacts it (which
// cuts 2 h blocks and leaves the newest data in the head) and closes it.
func makeBlocks(t testing.TB, dir string, spec blockSpec) {
	t.Helper()
	o := tsdb.DefaultOptions()
	o.MaxBlockDuration = o.MinBlockDuration
	if spec.compact {
		o.MaxBlockDuration = 3 * o.MinBlockDuration
	}
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	lsets := make([]labels.Labels, spec.series)
	for i := range lsets {
		lsets[i] = labels.FromStrings(labels.MetricName, "m", "job", "ship", "i", fmt.Sprint(i))
	}
	refs := make([]tsdb.SeriesRef, len(lsets))
	ctx := context.Background()
	for r := 0; r < spec.hours*3600/15; r++ {
		ts := int64(r) * 15000
		app := db.Appender(ctx)
		for i, ls := range lsets {
			ref, err := app.Append(refs[i], ls, ts, float64(i)*1000+float64(r)/7)
			require.NoError(t, err)
			refs[i] = ref
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.NoError(t, db.Close())
}

// sample is one float sample.
type sample struct {
	t int64
	v uint64 // float64 bits, so NaNs compare
}

// dumpDB returns every sample of the DB, by series.
func dumpDB(t testing.TB, db *tsdb.DB) map[string][]sample {
	t.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	out := map[string][]sample{}
	ss := q.Select(context.Background(), labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+"))
	for ss.Next() {
		s := ss.At()
		it := s.Iterator(nil)
		var got []sample
		for it.Next() != chunks.ValNone {
			ts, v := it.At()
			got = append(got, sample{ts, math.Float64bits(v)})
		}
		require.NoError(t, it.Err())
		out[s.Labels().String()] = got
	}
	require.NoError(t, ss.Err())
	return out
}

// localBlocks returns the metas of the blocks in dir.
func localBlocks(t testing.TB, dir string) []localBlock {
	t.Helper()
	bs, err := scanBlocks(dir)
	require.NoError(t, err)
	return bs
}

// copyDir copies the tree at src to dst.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
}

// recordingBucket wraps a bucket, records the names of successful
// uploads in order, and can fail or hold uploads for tests.
type recordingBucket struct {
	objstore.Bucket

	mu       sync.Mutex // protects the fields below
	uploads  []string   // names uploaded, in order
	failNext int        // fail this many next uploads
	failName string     // fail every upload whose name has this suffix
	// before, if set, runs before each upload (outside mu) and may
	// return an error to fail it.
	before func(ctx context.Context, name string) error
}

func (b *recordingBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	b.mu.Lock()
	before := b.before
	fail := b.failNext > 0 || (b.failName != "" && strings.HasSuffix(name, b.failName))
	if b.failNext > 0 {
		b.failNext--
	}
	b.mu.Unlock()
	if fail {
		return fmt.Errorf("injected failure uploading %s", name)
	}
	if before != nil {
		if err := before(ctx, name); err != nil {
			return err
		}
	}
	if err := b.Bucket.Upload(ctx, name, r, opts...); err != nil {
		return err
	}
	b.mu.Lock()
	b.uploads = append(b.uploads, name)
	b.mu.Unlock()
	return nil
}

func (b *recordingBucket) uploaded() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.uploads...)
}

// fastBackoff keeps retry tests quick.
var fastBackoff = Backoff{Min: time.Millisecond, Max: 4 * time.Millisecond, Attempts: 3}

// bucketFiles lists every object in bkt, recursively.
func bucketFiles(t testing.TB, bkt objstore.BucketReader) []string {
	t.Helper()
	var names []string
	err := bkt.Iter(context.Background(), "", func(name string) error {
		names = append(names, name)
		return nil
	}, objstore.WithRecursiveIter())
	require.NoError(t, err)
	return names
}

// blockDir returns the path of a block in dir.
func blockDir(dir string, b localBlock) string { return filepath.Join(dir, b.meta.ULID.String()) }
