package ship

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/thanos-io/objstore"
	"github.com/thanos-io/objstore/providers/filesystem"
	"go.uber.org/goleak"

	"github.com/isotsdb/tsdb"
)

// thanosShipperMeta mirrors Thanos's shipper.Meta, the struct its sidecar
// decodes thanos.shipper.json into.
type thanosShipperMeta struct {
	Version  int         `json:"version"`
	Uploaded []ulid.ULID `json:"uploaded"`
}

// thanosBlockMeta mirrors the parts of Thanos's metadata.Meta a reader of
// the bucket uses.
type thanosBlockMeta struct {
	ULID       ulid.ULID `json:"ulid"`
	MinTime    int64     `json:"minTime"`
	MaxTime    int64     `json:"maxTime"`
	Version    int       `json:"version"`
	Compaction struct {
		Level int `json:"level"`
	} `json:"compaction"`
	Thanos struct {
		Labels     map[string]string `json:"labels"`
		Downsample struct {
			Resolution int64 `json:"resolution"`
		} `json:"downsample"`
		Source       string   `json:"source"`
		SegmentFiles []string `json:"segment_files"`
		Files        []struct {
			RelPath   string `json:"rel_path"`
			SizeBytes int64  `json:"size_bytes"`
		} `json:"files"`
	} `json:"thanos"`
}

var (
	templatesMu sync.Mutex
	templates   = map[blockSpec]string{}
)

// testDataDir returns a new copy of a data directory written by makeBlocks
// with spec; the blocks are made once per spec and test binary.
func testDataDir(t *testing.T, spec blockSpec) string {
	t.Helper()
	templatesMu.Lock()
	defer templatesMu.Unlock()
	src, ok := templates[spec]
	if !ok {
		var err error
		src, err = os.MkdirTemp("", "ship-template-")
		require.NoError(t, err)
		makeBlocks(t, src, spec)
		templates[spec] = src
	}
	dst := filepath.Join(t.TempDir(), "data")
	copyDir(t, src, dst)
	return dst
}

// TestMain removes the template data directories, and fails the run if a
// test left a goroutine behind (a Run loop that did not stop, an upload
// still going). Idle HTTP connections of the S3 client are not leaks.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range templates {
		os.RemoveAll(dir)
	}
	if code == 0 {
		if err := goleak.Find(
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			// Started at init by a provider objstore's client package imports.
			goleak.IgnoreTopFunction("github.com/baidubce/bce-sdk-go/util/log.NewLogger.func1"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var small = blockSpec{series: 20, hours: 9}

// newBuckets are the bucket kinds the unit tests run against.
var newBuckets = []struct {
	name string
	new  func(t *testing.T) objstore.Bucket
}{
	{"inmem", func(*testing.T) objstore.Bucket { return objstore.NewInMemBucket() }},
	{"filesystem", func(t *testing.T) objstore.Bucket {
		b, err := filesystem.NewBucket(t.TempDir())
		require.NoError(t, err)
		return b
	}},
}

func readBucketMeta(t *testing.T, bkt objstore.BucketReader, id ulid.ULID) thanosBlockMeta {
	t.Helper()
	r, err := bkt.Get(context.Background(), path.Join(id.String(), metaFilename))
	require.NoError(t, err)
	defer r.Close()
	var m thanosBlockMeta
	require.NoError(t, json.NewDecoder(r).Decode(&m))
	return m
}

func TestSync(t *testing.T) {
	for _, bk := range newBuckets {
		t.Run(bk.name, func(t *testing.T) {
			dir := testDataDir(t, small)
			blocks := localBlocks(t, dir)
			require.GreaterOrEqual(t, len(blocks), 3)
			localMeta := map[ulid.ULID][]byte{}
			for _, b := range blocks {
				localMeta[b.meta.ULID] = b.raw
			}
			bkt := &recordingBucket{Bucket: bk.new(t)}
			reg := prometheus.NewPedanticRegistry()
			s, err := New(dir, bkt, &Options{
				ExternalLabels: map[string]string{"cluster": "eu1", "replica": "a"},
				Source:         "sidecar",
				Registerer:     reg,
			})
			require.NoError(t, err)
			for _, b := range blocks {
				require.True(t, s.KeepBlock(b.meta), "before Sync")
			}
			n, err := s.Sync(context.Background())
			require.NoError(t, err)
			require.Equal(t, len(blocks), n)

			t.Run("order", func(t *testing.T) {
				// Per block: chunks/* in name order, index, tombstones,
				// meta.json last.
				byBlock := map[string][]string{}
				var blockOrder []string
				for _, name := range bkt.uploaded() {
					id, rel, _ := strings.Cut(name, "/")
					if len(byBlock[id]) == 0 {
						blockOrder = append(blockOrder, id)
					}
					require.NotContains(t, byBlock[id], metaFilename, "%s uploaded after meta.json", name)
					byBlock[id] = append(byBlock[id], rel)
				}
				require.Len(t, blockOrder, len(blocks))
				require.True(t, slices.IsSorted(blockOrder), "blocks oldest first")
				for id, rels := range byBlock {
					require.Equal(t, metaFilename, rels[len(rels)-1], id)
					rels = rels[:len(rels)-1]
					if rels[len(rels)-1] == tombstonesFilename {
						rels = rels[:len(rels)-1]
					}
					require.Equal(t, indexFilename, rels[len(rels)-1], id)
					rels = rels[:len(rels)-1]
					require.True(t, slices.IsSorted(rels), id)
					require.NotEmpty(t, rels, id)
					for _, r := range rels {
						require.True(t, strings.HasPrefix(r, "chunks/"), r)
					}
				}
			})

			t.Run("thanos section", func(t *testing.T) {
				for _, b := range blocks {
					m := readBucketMeta(t, bkt, b.meta.ULID)
					require.Equal(t, b.meta.ULID, m.ULID)
					require.Equal(t, b.meta.MinTime, m.MinTime)
					require.Equal(t, b.meta.MaxTime, m.MaxTime)
					require.Equal(t, map[string]string{"cluster": "eu1", "replica": "a"}, m.Thanos.Labels)
					require.Equal(t, "sidecar", m.Thanos.Source)
					require.Zero(t, m.Thanos.Downsample.Resolution)
					require.NotEmpty(t, m.Thanos.Files)
					require.True(t, slices.IsSortedFunc(m.Thanos.Files, func(a, b struct {
						RelPath   string `json:"rel_path"`
						SizeBytes int64  `json:"size_bytes"`
					}) int {
						return strings.Compare(a.RelPath, b.RelPath)
					}), "files sorted by path, as Thanos sorts them")
					var rels []string
					sawMeta := false
					for _, f := range m.Thanos.Files {
						if f.RelPath == metaFilename {
							require.Zero(t, f.SizeBytes, "meta.json is listed without size")
							sawMeta = true
							continue
						}
						fi, err := os.Stat(filepath.Join(blockDir(dir, b), filepath.FromSlash(f.RelPath)))
						require.NoError(t, err)
						require.Equal(t, fi.Size(), f.SizeBytes, f.RelPath)
						rels = append(rels, f.RelPath)
					}
					require.True(t, sawMeta)
					require.Contains(t, rels, indexFilename)
					// segment_files: the chunks/ files, by name, as Thanos's
					// shipper lists them.
					segs, err := filepath.Glob(filepath.Join(blockDir(dir, b), "chunks", "*"))
					require.NoError(t, err)
					require.NotEmpty(t, segs)
					for i := range segs {
						segs[i] = filepath.Base(segs[i])
					}
					require.Equal(t, segs, m.Thanos.SegmentFiles)
					// The bucket has exactly the listed files.
					var inBucket []string
					for _, name := range bucketFiles(t, bkt) {
						if rel, ok := strings.CutPrefix(name, b.meta.ULID.String()+"/"); ok {
							inBucket = append(inBucket, rel)
						}
					}
					slices.Sort(inBucket)
					want := append(slices.Clone(rels), metaFilename)
					slices.Sort(want)
					require.Equal(t, want, inBucket)
					// The local meta.json is untouched.
					raw, err := os.ReadFile(filepath.Join(blockDir(dir, b), metaFilename))
					require.NoError(t, err)
					require.Equal(t, localMeta[b.meta.ULID], raw)
				}
			})

			t.Run("shipper file", func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join(dir, ShipperFile))
				require.NoError(t, err)
				var m thanosShipperMeta
				dec := json.NewDecoder(strings.NewReader(string(raw)))
				dec.DisallowUnknownFields()
				require.NoError(t, dec.Decode(&m))
				require.Equal(t, 1, m.Version)
				var want []ulid.ULID
				for _, b := range blocks {
					want = append(want, b.meta.ULID)
				}
				require.Equal(t, want, m.Uploaded)
				_, err = os.Stat(filepath.Join(dir, ShipperFile+".tmp"))
				require.ErrorIs(t, err, os.ErrNotExist)
			})

			t.Run("metrics", func(t *testing.T) {
				var size int64
				for _, name := range bkt.uploaded() {
					attrs, err := bkt.Attributes(context.Background(), name)
					require.NoError(t, err)
					size += attrs.Size
				}
				require.Equal(t, float64(len(blocks)), testutil.ToFloat64(s.metrics.uploads))
				require.Zero(t, testutil.ToFloat64(s.metrics.failures))
				require.Equal(t, float64(size), testutil.ToFloat64(s.metrics.bytesUploaded))
				last := testutil.ToFloat64(s.metrics.lastUpload)
				require.InDelta(t, float64(time.Now().Unix()), last, 60)
				n, err := testutil.GatherAndCount(reg, "tsdb_shipper_uploads_total", "tsdb_shipper_upload_failures_total",
					"tsdb_shipper_last_successful_upload_timestamp_seconds", "tsdb_shipper_uploaded_bytes_total")
				require.NoError(t, err)
				require.Equal(t, 4, n)
			})

			t.Run("no re-upload", func(t *testing.T) {
				before := len(bkt.uploaded())
				n, err := s.Sync(context.Background())
				require.NoError(t, err)
				require.Zero(t, n)
				// A new Shipper over the same directory: a restart.
				s2, err := New(dir, bkt, nil)
				require.NoError(t, err)
				n, err = s2.Sync(context.Background())
				require.NoError(t, err)
				require.Zero(t, n)
				require.Len(t, bkt.uploaded(), before)
				for _, b := range blocks {
					require.False(t, s2.KeepBlock(b.meta))
					require.True(t, s2.Shipped(b.meta.ULID))
				}
			})
		})
	}
}

func TestSyncLevels(t *testing.T) {
	spec := blockSpec{series: 10, hours: 17, compact: true}
	for _, tc := range []struct {
		name            string
		uploadCompacted bool
	}{
		{"level-1 only", false},
		{"compacted too", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testDataDir(t, spec)
			blocks := localBlocks(t, dir)
			levels := map[int]int{}
			for _, b := range blocks {
				levels[b.meta.Compaction.Level]++
			}
			require.NotZero(t, levels[1], "levels %v", levels)
			require.NotZero(t, len(blocks)-levels[1], "levels %v", levels)
			bkt := objstore.NewInMemBucket()
			s, err := New(dir, bkt, &Options{UploadCompacted: tc.uploadCompacted})
			require.NoError(t, err)
			n, err := s.Sync(context.Background())
			require.NoError(t, err)
			for _, b := range blocks {
				want := b.meta.Compaction.Level == 1 || tc.uploadCompacted
				ok, err := bkt.Exists(context.Background(), path.Join(b.meta.ULID.String(), metaFilename))
				require.NoError(t, err)
				require.Equal(t, want, ok, "level %d", b.meta.Compaction.Level)
				require.Equal(t, want, s.Shipped(b.meta.ULID))
				require.False(t, s.KeepBlock(b.meta), "shipped or never to ship")
			}
			if tc.uploadCompacted {
				require.Equal(t, len(blocks), n)
			} else {
				require.Equal(t, levels[1], n)
			}
		})
	}
}

func TestKeepBlock(t *testing.T) {
	id := ulid.MustNew(1, nil)
	meta := func(level int) tsdb.BlockMeta {
		m := tsdb.BlockMeta{ULID: id}
		m.Compaction.Level = level
		return m
	}
	for _, tc := range []struct {
		name    string
		opts    Options
		level   int
		shipped bool
		want    bool
	}{
		{"unshipped level 1", Options{}, 1, false, true},
		{"shipped level 1", Options{}, 1, true, false},
		{"unshipped level 2, not to upload", Options{}, 2, false, false},
		{"unshipped level 2, upload compacted", Options{UploadCompacted: true}, 2, false, true},
		{"shipped level 2, upload compacted", Options{UploadCompacted: true}, 2, true, false},
		{"allow delete unshipped", Options{AllowDeleteUnshipped: true}, 1, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.shipped {
				require.NoError(t, writeShipperFile(dir, []ulid.ULID{id}))
			}
			s, err := New(dir, objstore.NewInMemBucket(), &tc.opts)
			require.NoError(t, err)
			require.Equal(t, tc.want, s.KeepBlock(meta(tc.level)))
		})
	}
}

// TestKeepBlockConcurrent calls KeepBlock while Sync runs (for -race).
func TestKeepBlockConcurrent(t *testing.T) {
	dir := testDataDir(t, small)
	blocks := localBlocks(t, dir)
	s, err := New(dir, objstore.NewInMemBucket(), nil)
	require.NoError(t, err)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, b := range blocks {
				s.KeepBlock(b.meta)
			}
		}
	})
	_, err = s.Sync(context.Background())
	close(done)
	wg.Wait()
	require.NoError(t, err)
	for _, b := range blocks {
		require.False(t, s.KeepBlock(b.meta))
	}
}

// TestMetaInBucket: a block whose meta.json is in the bucket already (a
// crash after its upload, before the shipper file was written) is recorded
// as shipped and not uploaded again.
func TestMetaInBucket(t *testing.T) {
	dir := testDataDir(t, small)
	blocks := localBlocks(t, dir)
	inner := objstore.NewInMemBucket()
	first := blocks[0].meta.ULID
	require.NoError(t, inner.Upload(context.Background(), path.Join(first.String(), metaFilename), strings.NewReader("{}")))
	bkt := &recordingBucket{Bucket: inner}
	s, err := New(dir, bkt, nil)
	require.NoError(t, err)
	n, err := s.Sync(context.Background())
	require.NoError(t, err)
	require.Equal(t, len(blocks)-1, n)
	for _, name := range bkt.uploaded() {
		require.False(t, strings.HasPrefix(name, first.String()), name)
	}
	require.True(t, s.Shipped(first))
	got, err := readShipperFile(dir)
	require.NoError(t, err)
	require.Contains(t, got, first)
}

// TestThanosShipperFile: blocks listed by a file a Thanos sidecar wrote
// are not uploaded.
func TestThanosShipperFile(t *testing.T) {
	dir := testDataDir(t, small)
	blocks := localBlocks(t, dir)
	thanos := `{
	"version": 1,
	"uploaded": [
		"` + blocks[0].meta.ULID.String() + `"
	]
}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, ShipperFile), []byte(thanos), 0o666))
	bkt := &recordingBucket{Bucket: objstore.NewInMemBucket()}
	s, err := New(dir, bkt, nil)
	require.NoError(t, err)
	n, err := s.Sync(context.Background())
	require.NoError(t, err)
	require.Equal(t, len(blocks)-1, n)

	for _, bad := range []string{`{"version":2,"uploaded":[]}`, `{"version":1,"uploaded":["nope"]}`, `not json`} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ShipperFile), []byte(bad), 0o666))
		_, err := New(dir, bkt, nil)
		require.ErrorIs(t, err, ErrShipperFile, bad)
	}
}

func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failNext int
		failName string
		wantErr  bool
	}{
		{"transient, within attempts", fastBackoff.Attempts - 1, "", false},
		{"transient, attempts spent", fastBackoff.Attempts, "", true},
		{"index always fails", 0, "/" + indexFilename, true},
		{"meta.json always fails", 0, "/" + metaFilename, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testDataDir(t, small)
			blocks := localBlocks(t, dir)
			bkt := &recordingBucket{Bucket: objstore.NewInMemBucket(), failNext: tc.failNext, failName: tc.failName}
			s, err := New(dir, bkt, &Options{Backoff: fastBackoff})
			require.NoError(t, err)
			n, err := s.Sync(context.Background())
			if !tc.wantErr {
				require.NoError(t, err)
				require.Equal(t, len(blocks), n)
				require.Zero(t, testutil.ToFloat64(s.metrics.failures))
				return
			}
			require.ErrorIs(t, err, ErrSync)
			require.Contains(t, err.Error(), "injected failure")
			failed := len(blocks) - n
			require.NotZero(t, failed)
			require.Equal(t, float64(failed), testutil.ToFloat64(s.metrics.failures))
			for _, b := range blocks {
				ok, err := bkt.Exists(context.Background(), path.Join(b.meta.ULID.String(), metaFilename))
				require.NoError(t, err)
				require.Equal(t, s.Shipped(b.meta.ULID), ok)
				require.Equal(t, !ok, s.KeepBlock(b.meta))
			}
			// The failed blocks go at the next Sync.
			bkt.mu.Lock()
			bkt.failName = ""
			bkt.mu.Unlock()
			n2, err := s.Sync(context.Background())
			require.NoError(t, err)
			require.Equal(t, failed, n2)
		})
	}
}

// TestUploadReaderSize: the readers handed to Upload tell their size, so
// the S3 client need not guess.
func TestUploadReaderSize(t *testing.T) {
	dir := testDataDir(t, small)
	var sizes []int64
	bkt := &recordingBucket{Bucket: objstore.NewInMemBucket()}
	s, err := New(dir, &sizeCheckBucket{Bucket: bkt, t: t, sizes: &sizes}, nil)
	require.NoError(t, err)
	_, err = s.Sync(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, sizes)
	for _, n := range sizes {
		require.Positive(t, n)
	}
}

type sizeCheckBucket struct {
	objstore.Bucket
	t     *testing.T
	sizes *[]int64
}

func (b *sizeCheckBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	n, err := objstore.TryToGetSize(r)
	require.NoError(b.t, err, name)
	*b.sizes = append(*b.sizes, n)
	return b.Bucket.Upload(ctx, name, r, opts...)
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Min: 10 * time.Millisecond, Max: 50 * time.Millisecond, Attempts: 9}.withDefaults()
	for _, tc := range []struct {
		retry int
		want  time.Duration
	}{{1, 10 * time.Millisecond}, {2, 20 * time.Millisecond}, {3, 40 * time.Millisecond}, {4, 50 * time.Millisecond}, {30, 50 * time.Millisecond}} {
		require.Equal(t, tc.want, b.delay(tc.retry), "retry %d", tc.retry)
	}
	d := Backoff{}.withDefaults()
	require.Equal(t, Backoff{Min: defaultBackoffMin, Max: defaultBackoffMax, Attempts: defaultBackoffAttempts}, d)
}

// TestCancelMidUpload: a Sync whose context ends during a block's upload
// leaves that block without meta.json in the bucket and unrecorded; the
// next Sync uploads it.
func TestCancelMidUpload(t *testing.T) {
	dir := testDataDir(t, small)
	blocks := localBlocks(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	victim := blocks[1].meta.ULID.String()
	bkt := &recordingBucket{Bucket: objstore.NewInMemBucket()}
	bkt.before = func(ctx context.Context, name string) error {
		if strings.HasPrefix(name, victim+"/") && strings.HasSuffix(name, "/"+indexFilename) {
			cancel()
			return ctx.Err()
		}
		return nil
	}
	s, err := New(dir, bkt, &Options{Backoff: fastBackoff})
	require.NoError(t, err)
	n, err := s.Sync(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, n)
	ok, err := bkt.Exists(context.Background(), path.Join(victim, metaFilename))
	require.NoError(t, err)
	require.False(t, ok, "meta.json of an incomplete block")
	require.False(t, s.Shipped(blocks[1].meta.ULID))
	require.True(t, s.KeepBlock(blocks[1].meta))
	recorded, err := readShipperFile(dir)
	require.NoError(t, err)
	require.Len(t, recorded, 1)

	bkt.before = nil
	n, err = s.Sync(context.Background())
	require.NoError(t, err)
	require.Equal(t, len(blocks)-1, n)
}

func TestRunStops(t *testing.T) {
	dir := testDataDir(t, small)
	s, err := New(dir, objstore.NewInMemBucket(), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx, 10*time.Millisecond) }()
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(dir, ShipperFile))
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// TestSkipsIncomplete: directories that are not complete blocks are left
// alone.
func TestSkipsIncomplete(t *testing.T) {
	dir := testDataDir(t, small)
	blocks := localBlocks(t, dir)
	// A block being written: no meta.json yet.
	noMeta := filepath.Join(dir, ulid.MustNew(ulid.Now(), nil).String())
	require.NoError(t, os.MkdirAll(filepath.Join(noMeta, "chunks"), 0o777))
	// A compaction's temporary directory, with a meta.json.
	tmp := blockDir(dir, blocks[0]) + ".tmp-for-creation"
	copyDir(t, blockDir(dir, blocks[0]), tmp)
	// A torn meta.json.
	torn := filepath.Join(dir, ulid.MustNew(ulid.Now()+1, nil).String())
	require.NoError(t, os.MkdirAll(torn, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(torn, metaFilename), []byte(`{"ulid":`), 0o666))

	bkt := objstore.NewInMemBucket()
	s, err := New(dir, bkt, nil)
	require.NoError(t, err)
	n, err := s.Sync(context.Background())
	require.NoError(t, err)
	require.Equal(t, len(blocks), n)
	for name := range bkt.Objects() {
		require.False(t, strings.HasPrefix(name, filepath.Base(noMeta)) || strings.HasPrefix(name, filepath.Base(torn)), name)
	}
}

func TestNewBucketConfig(t *testing.T) {
	fsDir := t.TempDir()
	for _, tc := range []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{"filesystem", "type: FILESYSTEM\nconfig:\n  directory: " + fsDir + "\n", ""},
		{"filesystem lower case", "type: filesystem\nconfig:\n  directory: " + fsDir + "\n", ""},
		{"s3", "type: S3\nconfig:\n  bucket: b\n  endpoint: 127.0.0.1:1\n  insecure: true\n  access_key: a\n  secret_key: s\n", ""},
		{"not yaml", "type: [S3\n", "parsing config YAML"},
		{"unknown type", "type: FLOPPY\nconfig: {}\n", "not supported"},
		{"unknown key", "type: FILESYSTEM\nconfg:\n  directory: /x\n", "confg"},
		{"empty", "", "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bkt, err := NewBucket([]byte(tc.yaml), nil)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, bkt.Close())
				return
			}
			require.ErrorIs(t, err, ErrBadConfig)
			require.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestMetricsRegisterTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := New(t.TempDir(), objstore.NewInMemBucket(), &Options{Registerer: reg})
	require.NoError(t, err)
	_, err = New(t.TempDir(), objstore.NewInMemBucket(), &Options{Registerer: reg})
	var are prometheus.AlreadyRegisteredError
	require.True(t, errors.As(err, &are), "%v", err)
}
