package ship

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/thanos-io/objstore"

	"github.com/isotsdb/tsdb"
)

// Shipper uploads the blocks of one data directory to one bucket.
//
// Sync and Run may be called from any goroutine; calls of Sync are
// serialized (a Sync waits for the one in progress). KeepBlock may be called
// at any time, concurrently with Sync: it reads only the in-memory set of
// shipped blocks. Two Shippers must not share a data directory.
type Shipper struct {
	dir     string
	bkt     objstore.Bucket
	opts    Options // with defaults applied
	logger  *slog.Logger
	metrics *metrics

	syncMu sync.Mutex // held for the whole of a Sync; taken before mu

	mu      sync.RWMutex // protects shipped; held only to read or update it
	shipped map[ulid.ULID]struct{}
}

// New returns a Shipper of the blocks in dataDir to bkt. It reads the
// data directory's thanos.shipper.json, so blocks shipped before (by this
// package or a Thanos sidecar) are not uploaded again.
func New(dataDir string, bkt objstore.Bucket, opts *Options) (*Shipper, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Source == "" {
		o.Source = DefaultSource
	}
	o.Backoff = o.Backoff.withDefaults()
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	shipped, err := readShipperFile(dataDir)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	return &Shipper{dir: dataDir, bkt: bkt, opts: o, logger: logger, metrics: m, shipped: shipped}, nil
}

// KeepBlock reports whether retention should keep the block: true while
// the block is one the shipper will upload and has not uploaded yet. It
// returns false for blocks the shipper never uploads (compacted blocks
// without Options.UploadCompacted) and always false with
// Options.AllowDeleteUnshipped. Pass it as tsdb.Options.KeepBlock: the DB
// calls it with its compaction lock held, and it only reads the set of
// shipped blocks under a read lock (Sync takes the write lock just to add
// a block), so it is fast and never calls the DB.
//
// It holds off retention, not compaction: with compaction on
// (MaxBlockDuration greater than MinBlockDuration) a level-1 block can be
// merged into a larger block before it is shipped, and that data reaches
// the bucket only with Options.UploadCompacted, as with Thanos's sidecar.
func (s *Shipper) KeepBlock(m tsdb.BlockMeta) bool {
	if s.opts.AllowDeleteUnshipped || !s.wants(m) {
		return false
	}
	return !s.isShipped(m.ULID)
}

// Shipped reports whether the block was shipped (uploaded, or found in
// the bucket).
func (s *Shipper) Shipped(id ulid.ULID) bool { return s.isShipped(id) }

func (s *Shipper) isShipped(id ulid.ULID) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.shipped[id]
	return ok
}

// wants reports whether the options make m a block to upload.
func (s *Shipper) wants(m tsdb.BlockMeta) bool {
	return m.Compaction.Level <= 1 || s.opts.UploadCompacted
}

// Run calls Sync now and then every interval until ctx is done, and then
// returns ctx's error. A failed Sync is logged; its blocks are tried again
// at the next one. An upload in progress when ctx ends is abandoned
// without its meta.json, and taken up again by a later Sync.
func (s *Shipper) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.Sync(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("ship: sync failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// PendingBytes returns the number of blocks that Sync would upload now and
// the size of their files (meta.json aside), without looking at the
// bucket; for progress reports.
func (s *Shipper) PendingBytes() (blocks int, bytes int64, err error) {
	bs, err := scanBlocks(s.dir)
	if err != nil {
		return 0, 0, err
	}
	for _, b := range bs {
		if !s.wants(b.meta) || s.isShipped(b.meta.ULID) {
			continue
		}
		files, err := openBlockFiles(b.dir)
		if err != nil {
			continue // gone meanwhile: Sync will skip it too
		}
		for _, f := range files {
			bytes += f.size
		}
		closeBlockFiles(files)
		blocks++
	}
	return blocks, bytes, nil
}

// Sync uploads every complete block of the data directory that is to be
// shipped and was not, oldest first, and returns how many it uploaded. A
// block whose meta.json is in the bucket already is recorded as shipped
// without uploading. After each block shipped, thanos.shipper.json is
// rewritten (atomically), so a crash costs at most one block's upload.
//
// A block that fails (after Options.Backoff's retries) is counted in
// tsdb_shipper_upload_failures_total, and Sync goes on with the others;
// the error it then returns wraps ErrSync and each block's error. If ctx
// ends, Sync stops at once and returns ctx's error among them.
func (s *Shipper) Sync(ctx context.Context) (uploaded int, err error) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()

	blocks, err := scanBlocks(s.dir)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, b := range blocks {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		id := b.meta.ULID
		if !s.wants(b.meta) || s.isShipped(id) {
			continue
		}
		ok, err := s.bkt.Exists(ctx, path.Join(id.String(), metaFilename))
		if err != nil {
			s.metrics.failures.Inc()
			errs = append(errs, fmt.Errorf("block %s: check bucket: %w", id, err))
			continue
		}
		if ok {
			s.logger.Info("ship: block found in bucket, recorded as shipped", "block", id)
		} else if err := s.uploadBlock(ctx, b); err != nil {
			s.metrics.failures.Inc()
			s.logger.Warn("ship: block upload failed", "block", id, "err", err)
			errs = append(errs, fmt.Errorf("block %s: %w", id, err))
			continue
		} else {
			uploaded++
			s.metrics.uploads.Inc()
			s.metrics.lastUpload.SetToCurrentTime()
			s.logger.Info("ship: block uploaded", "block", id, "level", b.meta.Compaction.Level)
		}
		s.mu.Lock()
		s.shipped[id] = struct{}{}
		s.mu.Unlock()
		if err := s.saveLocked(blocks); err != nil {
			errs = append(errs, err)
			break // the next Sync rewrites it; the block is not uploaded again as its meta.json is in the bucket
		}
	}
	if len(errs) > 0 {
		return uploaded, fmt.Errorf("%w (%d errors): %w", ErrSync, len(errs), errors.Join(errs...))
	}
	return uploaded, nil
}

// saveLocked writes the shipper file listing the blocks shipped that are
// still in the data directory (as Thanos prunes it). Called with syncMu
// held.
func (s *Shipper) saveLocked(blocks []localBlock) error {
	var ids []ulid.ULID
	s.mu.RLock()
	for _, b := range blocks {
		if _, ok := s.shipped[b.meta.ULID]; ok {
			ids = append(ids, b.meta.ULID)
		}
	}
	s.mu.RUnlock()
	return writeShipperFile(s.dir, ids)
}

// uploadBlock uploads the block's files, then its extended meta.json.
// meta.json is uploaded only if every other file was.
func (s *Shipper) uploadBlock(ctx context.Context, b localBlock) error {
	files, err := openBlockFiles(b.dir)
	if err != nil {
		return err
	}
	defer closeBlockFiles(files)
	meta, err := bucketMeta(b.raw, files, s.opts.ExternalLabels, s.opts.Source)
	if err != nil {
		return err
	}
	id := b.meta.ULID.String()
	for _, bf := range files {
		if err := s.uploadRetry(ctx, path.Join(id, bf.rel), bf.f, bf.size); err != nil {
			return err
		}
	}
	return s.uploadRetry(ctx, path.Join(id, metaFilename), bytes.NewReader(meta), int64(len(meta)))
}

// uploadRetry uploads the size bytes of r to name, trying again after a
// backoff on failure until Options.Backoff.Attempts tries are spent or ctx
// ends. Each try reads r from its start.
func (s *Shipper) uploadRetry(ctx context.Context, name string, r io.ReaderAt, size int64) error {
	bo := s.opts.Backoff
	var err error
	for try := 1; ; try++ {
		err = s.bkt.Upload(ctx, name, sizedReader{io.NewSectionReader(r, 0, size)})
		if err == nil {
			s.metrics.bytesUploaded.Add(float64(size))
			if s.opts.Progress != nil {
				s.opts.Progress(size)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("upload %s: %w", name, ctx.Err())
		}
		if try >= bo.Attempts {
			return fmt.Errorf("upload %s: %d tries: %w", name, try, err)
		}
		t := time.NewTimer(bo.delay(try))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("upload %s: %w (last error: %w)", name, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// sizedReader tells objstore the size of what it uploads (objstore's
// ObjectSizer), which lets the S3 client choose between a single PUT and
// a multipart upload instead of buffering parts of unknown length.
type sizedReader struct{ *io.SectionReader }

func (r sizedReader) ObjectSize() (int64, error) { return r.Size(), nil }
