package chunkseg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// smallSegment returns a segment file with a few chunks and their metas,
// with refs set, for the corruption tests.
func smallSegment(t *testing.T) ([]byte, []chunks.Meta) {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 5))
	metas := append(goldenMetas(t), genMetas(t, r, 3, 8)...)
	fsys := vfs.NewMemFS()
	writeSegments(t, r, fsys, testChunksDir, metas)
	b, err := fsys.ReadFile(segName(1))
	require.NoError(t, err)
	return b, metas
}

// recordEnd returns the offset just past m's record.
func recordEnd(m chunks.Meta) int64 {
	_, off := SplitBlockRef(m.Ref)
	return int64(off) + recordSize(len(m.Chunk.Bytes()))
}

// TestSegmentReaderTruncated cuts a segment file at every length: chunks
// wholly before the cut read fine, the others fail with a *corrupt.Error
// at their offset, and a file shorter than its header fails to open.
func TestSegmentReaderTruncated(t *testing.T) {
	full, metas := smallSegment(t)
	for l := range len(full) {
		fsys := memFSWith(t, full[:l])
		rd, err := NewSegmentReader(fsys, testChunksDir)
		if l < SegmentHeaderSize {
			requireCorruption(t, err, segName(1), 0)
			continue
		}
		require.NoError(t, err, "length %d", l)
		require.Equal(t, int64(l), rd.Size())
		for i, m := range metas {
			c, err := rd.Chunk(m.Ref)
			if recordEnd(m) <= int64(l) {
				require.NoError(t, err, "length %d chunk %d", l, i)
				requireSameChunk(t, m.Chunk, c)
				continue
			}
			_, off := SplitBlockRef(m.Ref)
			requireCorruption(t, err, segName(1), int64(off))
		}
		require.NoError(t, rd.Close())
	}
}

// TestSegmentReaderFlippedByte flips every byte of a segment file in turn:
// in the header the file fails to open, elsewhere exactly the chunk holding
// the byte fails, with a *corrupt.Error at its offset.
func TestSegmentReaderFlippedByte(t *testing.T) {
	full, metas := smallSegment(t)
	for i := range full {
		b := bytes.Clone(full)
		b[i] ^= 0xFF
		rd, err := NewSegmentReader(memFSWith(t, b), testChunksDir)
		if i < SegmentHeaderSize {
			want := map[bool]int64{true: 0, false: int64(min(i, 5))}[i < 4]
			requireCorruption(t, err, segName(1), want)
			continue
		}
		require.NoError(t, err, "flip at %d", i)
		for j, m := range metas {
			_, off := SplitBlockRef(m.Ref)
			c, err := rd.Chunk(m.Ref)
			if int64(i) < int64(off) || int64(i) >= recordEnd(m) {
				require.NoError(t, err, "flip at %d, chunk %d", i, j)
				requireSameChunk(t, m.Chunk, c)
				continue
			}
			requireCorruption(t, err, segName(1), int64(off))
		}
		require.NoError(t, rd.Close())
	}
}

func TestSegmentReaderBadHeader(t *testing.T) {
	golden := goldenBytes(t)
	with := func(off int, v byte) []byte {
		b := bytes.Clone(golden)
		b[off] = v
		return b
	}
	for _, tc := range []struct {
		name string
		file []byte
		off  int64
		msg  string
	}{
		{"empty", nil, 0, "shorter than"},
		{"short", golden[:7], 0, "shorter than"},
		{"magic", with(3, 0xDE), 0, "magic"},
		{"version 0", with(4, 0), 4, "version 0"},
		{"version 2", with(4, 2), 4, "version 2"},
		{"padding", with(7, 1), 5, "padding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A good first file, so that the bad second one is what fails.
			_, err := NewSegmentReader(memFSWith(t, golden, tc.file), testChunksDir)
			ce := requireCorruption(t, err, segName(2), tc.off)
			require.Contains(t, ce.Error(), tc.msg)
			require.Contains(t, err.Error(), segName(2))
		})
	}
}

// record returns a segment record for enc and data with a valid checksum.
func record(enc byte, data []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(len(data)))
	b = append(b, enc)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32cBitwise(b[len(b)-len(data)-1:]))
}

func TestSegmentReaderBadRecords(t *testing.T) {
	header := goldenBytes(t)[:SegmentHeaderSize]
	good := record(byte(chunks.EncXOR), goldenMetas(t)[0].Chunk.Bytes())
	seg := func(parts ...[]byte) []byte { return bytes.Join(append([][]byte{header}, parts...), nil) }

	for _, tc := range []struct {
		name string
		file []byte
		ref  uint64
		is   error // wrapped sentinel
		off  int64 // corruption offset, if is == corrupt.ErrCorrupt
		msg  string
	}{
		{"no such segment", seg(good), BlockRef(1, 8), ErrInvalidRef, 0, "segment 1 of 1"},
		{"last segment index", seg(good), BlockRef(math.MaxUint32, 8), ErrInvalidRef, 0, "segment"},
		{"offset in header", seg(good), BlockRef(0, 7), ErrInvalidRef, 0, "header"},
		{"offset zero", seg(good), 0, ErrInvalidRef, 0, "header"},
		{"offset at end", seg(good), BlockRef(0, uint32(8+len(good))), corrupt.ErrCorrupt, int64(8 + len(good)), "past the end"},
		{"offset far past end", seg(good), BlockRef(0, math.MaxUint32), corrupt.ErrCorrupt, math.MaxUint32, "past the end"},
		{"huge length", seg([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 1, 0, 0, 0, 0}), 8, corrupt.ErrCorrupt, 8, "runs past"},
		{"overlong length", seg(bytes.Repeat([]byte{0x80}, 11), good), 8, corrupt.ErrCorrupt, 8, "length"},
		{"length only", seg([]byte{0x00}), 8, corrupt.ErrCorrupt, 8, "runs past"},
		{"no crc", seg(good[:len(good)-1]), 8, corrupt.ErrCorrupt, 8, "runs past"},
		{"bad crc", seg(good[:len(good)-1], []byte{good[len(good)-1] ^ 1}), 8, corrupt.ErrCorrupt, 8, "checksum"},
		{"xor too short", seg(record(byte(chunks.EncXOR), []byte{0})), 8, corrupt.ErrCorrupt, 8, "header"},
		{"xor empty", seg(record(byte(chunks.EncXOR), nil)), 8, corrupt.ErrCorrupt, 8, "header"},
		{"second record bad", seg(good, good[:5]), BlockRef(0, uint32(8+len(good))), corrupt.ErrCorrupt, int64(8 + len(good)), "runs past"},
		{"encoding none", seg(record(0, []byte{0, 0})), 8, chunks.ErrUnknownEncoding, 8, "unknown chunk encoding: 0"},
		{"encoding 99", seg(record(99, []byte{0, 0})), 8, chunks.ErrUnknownEncoding, 8, "unknown chunk encoding: 99"},
		{"histogram bad flags", seg(record(byte(chunks.EncHistogram), []byte{0, 0, 1})), 8, corrupt.ErrCorrupt, 8, "flags"},
		{"histogram too short", seg(record(byte(chunks.EncHistogram), []byte{0, 0})), 8, corrupt.ErrCorrupt, 8, "header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := openReader(t, memFSWith(t, tc.file))
			c, err := rd.Chunk(tc.ref)
			require.Nil(t, c)
			require.ErrorIs(t, err, tc.is)
			require.Contains(t, err.Error(), tc.msg)
			switch tc.is {
			case corrupt.ErrCorrupt:
				requireCorruption(t, err, segName(1), tc.off)
			case chunks.ErrUnknownEncoding:
				// Unknown encodings are corrupt, never skipped.
				requireCorruption(t, err, segName(1), tc.off)
			default:
				require.NotErrorIs(t, err, corrupt.ErrCorrupt)
			}
			// The good record, where there is one, still reads.
			if bytes.HasPrefix(tc.file[8:], good) {
				c, err := rd.Chunk(8)
				require.NoError(t, err)
				requireSameChunk(t, goldenMetas(t)[0].Chunk, c)
			}
		})
	}
}

// TestSegmentReaderXORCorruptError checks that a record whose XOR data is
// too short carries the chunk-level *corrupt.Error without a file inside the file-level one.
func TestSegmentReaderXORCorruptError(t *testing.T) {
	file := append(goldenBytes(t)[:SegmentHeaderSize:SegmentHeaderSize], record(byte(chunks.EncXOR), []byte{1})...)
	rd := openReader(t, memFSWith(t, file))
	_, err := rd.Chunk(8)
	requireCorruption(t, err, segName(1), 8)
	requireCorrupt(t, err)
}

func TestSegmentReaderIgnoresOtherFiles(t *testing.T) {
	golden := goldenBytes(t)
	fsys := memFSWith(t, golden)
	for _, name := range []string{"000001.tmp", "index", "lock", "x1"} {
		require.NoError(t, fsys.WriteFile(filepath.Join(testChunksDir, name), []byte("junk"), 0o644))
	}
	rd := openReader(t, fsys)
	require.Equal(t, int64(len(golden)), rd.Size())
	for i, m := range goldenMetas(t) {
		c, err := rd.Chunk([]uint64{8, 25}[i])
		require.NoError(t, err)
		requireSameChunk(t, m.Chunk, c)
	}
}

func TestSegmentReaderErrors(t *testing.T) {
	t.Run("missing dir", func(t *testing.T) {
		_, err := NewSegmentReader(vfs.NewMemFS(), testChunksDir)
		require.Error(t, err)
		require.NotErrorIs(t, err, corrupt.ErrCorrupt)
	})
	t.Run("map fails", func(t *testing.T) {
		fsys := memFSWith(t, goldenBytes(t), goldenBytes(t))
		injected := errors.New("injected")
		fsys.SetHook(func(op vfs.Op, name string) error {
			if op == vfs.OpMap && strings.HasSuffix(name, "000002") {
				return injected
			}
			return nil
		})
		_, err := NewSegmentReader(fsys, testChunksDir)
		require.ErrorIs(t, err, injected)
	})
	t.Run("closed", func(t *testing.T) {
		rd, err := NewSegmentReader(memFSWith(t, goldenBytes(t)), testChunksDir)
		require.NoError(t, err)
		require.NoError(t, rd.Close())
		_, err = rd.Chunk(8)
		require.ErrorIs(t, err, ErrClosed)
		require.NoError(t, rd.Close())
	})
}

// TestSegmentReaderConcurrent reads and iterates chunks from several
// goroutines at once; run with -race.
func TestSegmentReaderConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	metas := genMetas(t, r, 400, 120)
	fsys := vfs.NewMemFS()
	writeSegments(t, r, fsys, testChunksDir, metas, WithMaxSegmentSize(8<<10))
	rd := openReader(t, fsys)

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			var it chunks.Iterator
			for k := range metas {
				m := metas[(k*7+g*13)%len(metas)]
				c, err := rd.Chunk(m.Ref)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(c.Bytes(), m.Chunk.Bytes()) {
					errs <- fmt.Errorf("chunk %#x differs", m.Ref)
					return
				}
				it = c.Iterator(it)
				n := 0
				for it.Next() != chunks.ValNone {
					n++
				}
				if it.Err() != nil || n != m.Chunk.NumSamples() {
					errs <- fmt.Errorf("chunk %#x: %d samples, err %v", m.Ref, n, it.Err())
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
