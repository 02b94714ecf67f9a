package tsdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// Deletion.
//
// Delete marks time ranges of series deleted: in each block they overlap
// (its tombstones file, rewritten atomically) and in the head (in memory,
// head_tombstones.go, made durable by a Tombstones record in the WAL).
// Queries never return deleted samples; head compaction leaves them out of
// the block it writes and CleanTombstones (clean_tombstones.go) rewrites
// blocks without them.
//
// A Delete touches several files, so it first writes its request to a
// small intent file in the data directory; Open applies a leftover intent
// again (deleting twice is the same as once). A crash therefore leaves the
// DB with the delete done entirely or not at all. Open resumes the delete
// only once it has loaded every block that can be read: an I/O error
// opening a block, or reading the intent, fails Open and keeps the intent
// for the next Open.
//
// Blocks that Open skipped as corrupt (ErrCorruptBlock) do not get the
// tombstones, whether the Delete is a new one or resumed: their index
// cannot be read, and the DB never serves them, so deleted samples cannot
// come back through them. Open still completes a resumed delete on the
// rest and removes the intent rather than keeping it: kept, it would be
// applied to the head again at every Open, deleting samples appended after
// it, and the next Delete replaces the file anyway. It is not half applied
// silently: every Delete logs, at error level, each skipped block that may
// hold data in its range (unknown range, or overlapping), so an operator
// who repairs such a block knows to repeat the delete.
//
// A Querier sees the deletions made before it was created: it keeps the
// tombstones it started with, like the rest of its snapshot.

// deleteIntentFile holds a Delete in progress.
const deleteIntentFile = "delete-intent.json"

// deleteIntent is the intent file's contents.
type deleteIntent struct {
	Mint     int64         `json:"mint"`
	Maxt     int64         `json:"maxt"`
	Matchers []intentMatch `json:"matchers"`
}

type intentMatch struct {
	Type  labels.MatchType `json:"type"`
	Name  string           `json:"name"`
	Value string           `json:"value"`
}

// Delete marks the samples in [mint, maxt] of the series matching all of
// ms as deleted. Queriers created after it returns never see them. It waits
// for a running compaction (or CleanTombstones) to finish first; if ctx is
// done while it waits, it returns ctx.Err() (wrapped) having changed
// nothing.
func (db *DB) Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error {
	if len(ms) == 0 {
		return ErrInvalidDelete
	}
	if mint > maxt {
		return fmt.Errorf("%w: mint %d > maxt %d", ErrInvalidTimeRange, mint, maxt)
	}
	release, err := db.beginAdmin(ctx, opDelete)
	if err != nil {
		return err
	}
	defer release()
	in := deleteIntent{Mint: mint, Maxt: maxt}
	for _, m := range ms {
		in.Matchers = append(in.Matchers, intentMatch{Type: m.Type, Name: m.Name, Value: m.Value})
	}
	if err := db.writeIntent(&in); err != nil {
		return fmt.Errorf("tsdb: delete: %w", err)
	}
	if err := db.applyDelete(ctx, mint, maxt, ms); err != nil {
		return fmt.Errorf("tsdb: delete: %w", err)
	}
	return db.removeIntent()
}

func (db *DB) writeIntent(in *deleteIntent) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if err := replaceFile(db.fs, filepath.Join(db.dir, deleteIntentFile), b); err != nil {
		return err
	}
	return db.fs.SyncDir(db.dir)
}

func (db *DB) removeIntent() error {
	if err := db.fs.Remove(filepath.Join(db.dir, deleteIntentFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tsdb: delete: remove intent: %w", err)
	}
	return db.fs.SyncDir(db.dir)
}

// resumeDelete applies a Delete that a crash interrupted. Called by Open,
// after loadBlocks, which fails on an I/O error: the delete is applied to
// every block but those skipped as corrupt (see the top of this file). An
// error keeps the intent for the next Open.
func (db *DB) resumeDelete(ctx context.Context) error {
	f, err := db.fs.Open(filepath.Join(db.dir, deleteIntentFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tsdb: resume delete: %w", err)
	}
	// An I/O error reading it is no unreadable intent: Open fails and
	// keeps it. (A directory in its place is: see isIOFailure.)
	b, err := io.ReadAll(f)
	_ = f.Close()
	if isIOFailure(err) {
		return fmt.Errorf("tsdb: resume delete: read intent: %w", err)
	}
	var in deleteIntent
	if err == nil {
		err = json.NewDecoder(bytes.NewReader(b)).Decode(&in)
	}
	if err != nil {
		// Never completely written, hence never acted upon.
		db.logger.Warn("tsdb: dropping unreadable delete intent", "err", err)
		return db.removeIntent()
	}
	var ms []*labels.Matcher
	for _, m := range in.Matchers {
		lm, err := labels.NewMatcher(m.Type, m.Name, m.Value)
		if err != nil {
			ms = nil
			break
		}
		ms = append(ms, lm)
	}
	if len(ms) == 0 || in.Mint > in.Maxt {
		// Delete never writes such a request (it refuses a Delete without
		// matchers, which would delete everything, or with an invalid
		// one): the file is not ours to act upon.
		db.logger.Warn("tsdb: dropping invalid delete intent", "matchers", len(in.Matchers), "mint", in.Mint, "maxt", in.Maxt)
		return db.removeIntent()
	}
	db.logger.Info("tsdb: completing a delete interrupted by a crash", "mint", in.Mint, "maxt", in.Maxt)
	if err := db.applyDelete(ctx, in.Mint, in.Maxt, ms); err != nil {
		return fmt.Errorf("tsdb: resume delete: %w", err)
	}
	return db.removeIntent()
}

// applyDelete writes the tombstones of a delete to every block it touches
// and to the head's WAL, then installs them all at once for new queriers.
// The caller holds cmtx. It installs them under db.mu, taking Block.mu and
// tombsMu (with refTable.mu) under it.
func (db *DB) applyDelete(ctx context.Context, mint, maxt int64, ms []*labels.Matcher) error {
	type blockTombs struct {
		b    *Block
		t    *tombstones.MemTombstones
		size int64
	}
	var updates []blockTombs
	blocks := db.acquireBlocks(func(b *Block) bool { return b.overlaps(mint, maxt) })
	defer releaseBlocks(blocks)
	for _, b := range blocks {
		t, changed, err := blockDeletions(ctx, b, mint, maxt, ms)
		if err != nil {
			return err
		}
		// Unchanged tombstones are skipped, unless meta.json does not
		// count them yet (a crash between the two writes below).
		if !changed && b.meta.Stats.NumTombstones == t.Total() {
			continue
		}
		size, err := tombstones.WriteFile(db.fs, b.dir, t)
		if err != nil {
			return fmt.Errorf("block %s: %w", b.dir, err)
		}
		m := b.meta
		m.Stats.NumTombstones = t.Total()
		if err := writeMeta(db.fs, b.dir, &m); err != nil {
			return fmt.Errorf("block %s: %w", b.dir, err)
		}
		updates = append(updates, blockTombs{b, t, size})
	}

	h := db.head
	add, stones, err := h.deletions(mint, maxt, ms)
	if err != nil {
		return err
	}
	if h.wal != nil && len(stones) > 0 {
		var enc record.Encoder
		if err := h.wal.Log(enc.Tombstones(stones, nil)); err != nil {
			return fmt.Errorf("%w: %w", ErrWAL, err)
		}
		// Durable before the intent goes: whatever the fsync policy, a
		// completed Delete survives a crash.
		if err := h.wal.Sync(); err != nil {
			return fmt.Errorf("%w: %w", ErrWAL, err)
		}
	}

	// Install everything at once: a querier is created under db.mu and
	// takes either all of the new tombstones or none.
	db.mu.Lock()
	for _, u := range updates {
		u.b.setTombstones(u.t, u.size) // also counts them in the meta, for Blocks (db.mu) and Meta (b.mu)
	}
	h.addTombstones(add)
	db.mu.Unlock()
	for _, s := range db.skipped {
		if s.mayHold(mint, maxt) {
			db.logger.Error("tsdb: delete not applied to a block skipped as corrupt; repeat it if the block is repaired",
				"dir", s.dir, "mint", mint, "maxt", maxt, "matchers", fmt.Sprint(ms))
		}
	}
	return nil
}

// blockDeletions returns b's tombstones plus [mint, maxt] for each series
// matching ms with data in that range, and whether that changed anything.
func blockDeletions(ctx context.Context, b *Block, mint, maxt int64, ms []*labels.Matcher) (*tombstones.MemTombstones, bool, error) {
	out := tombstones.NewMemTombstones()
	if err := b.tombstones().Iter(func(ref uint64, ivs tombstones.Intervals) error {
		out.AddInterval(ref, ivs...)
		return nil
	}); err != nil {
		return nil, false, err
	}
	p, err := index.PostingsForMatchers(b.index, ms...)
	if err != nil {
		return nil, false, err
	}
	var (
		builder = labels.NewScratchBuilder(16)
		metas   []index.ChunkMeta
		changed bool
	)
	iv := tombstones.Interval{Mint: max(mint, b.meta.MinTime), Maxt: min(maxt, b.meta.MaxTime-1)}
	for n := 0; p.Next(); n++ {
		if n%ctxCheckInterval == 0 {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		ref := p.At()
		if err := b.index.Series(ref, &builder, &metas); err != nil {
			return nil, false, fmt.Errorf("block %s: series %d: %w", b.dir, ref, err)
		}
		for _, m := range metas {
			if m.MaxTime >= mint && m.MinTime <= maxt {
				if cur, _ := out.Get(ref); !coversAll(cur, iv.Mint, iv.Maxt) {
					out.AddInterval(ref, iv)
					changed = true
				}
				break
			}
		}
	}
	return out, changed, p.Err()
}
