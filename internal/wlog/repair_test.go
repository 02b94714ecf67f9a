package wlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// tornTailCase describes a log whose last record is cut at every offset.
type tornTailCase struct {
	name   string
	opts   Options
	before [][]byte // records logged before the one that is torn
	last   []byte
}

func tornTailCases() []tornTailCase {
	// The filler does not compress, so it takes the same room with snappy.
	rng := rand.New(rand.NewPCG(5, 5))
	filler := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	lastRec := make([]byte, 100)
	for i := range lastRec {
		lastRec[i] = byte(i*31 + 1)
	}
	// compressible shrinks to a little over 100 bytes with snappy.
	compressible := bytes.Repeat([]byte("0123456789abcdefghij"), 200)
	return []tornTailCase{
		// The last record is one fragment in the middle of a page.
		{name: "full", before: [][]byte{[]byte("a"), filler(500)}, last: lastRec},
		// The last record starts 60 bytes before a page end and is split
		// into a first and a last fragment.
		{name: "split", before: [][]byte{filler(PageSize - 60 - headerSize)}, last: lastRec},
		// Same with snappy: the filler compresses, the last record does not.
		{name: "split snappy", opts: Options{Compression: CompressionSnappy},
			before: [][]byte{filler(PageSize - 60 - headerSize)}, last: compressible},
		// The last record is the first one of a later segment.
		{name: "new segment", opts: Options{SegmentSize: PageSize},
			before: [][]byte{filler(PageSize - 100)}, last: lastRec},
		// An empty last record: only a header.
		{name: "empty", before: [][]byte{[]byte("a")}, last: []byte{}},
	}
}

// recordEnd returns the end of the record whose first fragment is at start,
// following its fragment headers.
func recordEnd(seg []byte, start int64) int64 {
	for off := start; ; {
		n := int64(binary.BigEndian.Uint16(seg[off+1:]))
		switch seg[off] & fragKindMask {
		case fragFull, fragLast:
			return off + headerSize + n
		}
		off += headerSize + n // first and middle fragments end at a page boundary
	}
}

// lastFragment returns the offset of the last fragment of the record whose
// first fragment is at start.
func lastFragment(seg []byte, start int64) int64 {
	for off := start; ; {
		switch seg[off] & fragKindMask {
		case fragFull, fragLast:
			return off
		}
		off += headerSize + int64(binary.BigEndian.Uint16(seg[off+1:]))
	}
}

// TestTornTailEveryOffset cuts the last segment at every byte of the last
// record: reading must report a *corrupt.Error (except at the record's start
// and end, which are clean ends), Repair must keep exactly the records
// before it, and the reopened log must accept new records.
func TestTornTailEveryOffset(t *testing.T) {
	for _, tc := range tornTailCases() {
		t.Run(tc.name, func(t *testing.T) {
			// Build the log once and find where the last record lies.
			src := vfs.NewMemFS()
			w := openTest(t, src, tc.opts)
			require.NoError(t, w.Log(tc.before...))
			_, seg, err := w.Segments()
			require.NoError(t, err)
			start := int64(len(segmentBytes(t, src, seg)))
			if start%PageSize == 0 && start > 0 {
				start = 0 // the last record will go into a new segment
			}
			require.NoError(t, w.Log(tc.last))
			_, lastSeg, err := w.Segments()
			require.NoError(t, err)
			require.NoError(t, w.Close())
			if lastSeg != seg {
				start = 0
			}
			full := segmentBytes(t, src, lastSeg)
			end := recordEnd(full, start)
			if tc.opts.Compression == CompressionSnappy {
				require.Equal(t, byte(fragFirst|flagSnappy), full[start], "test assumes the last record is compressed and split")
			}

			for cut := start; cut <= end; cut++ {
				fsys := vfs.NewMemFS()
				require.NoError(t, fsys.MkdirAll(testDir, 0o777))
				for i := 0; i < lastSeg; i++ {
					require.NoError(t, fsys.WriteFile(SegmentName(testDir, i), segmentBytes(t, src, i), 0o666))
				}
				require.NoError(t, fsys.WriteFile(SegmentName(testDir, lastSeg), full[:cut], 0o666))

				got, err := readAll(t, fsys, testDir)
				if cut == start || cut == end {
					require.NoError(t, err, "cut at %d", cut)
					want := tc.before
					if cut == end {
						want = append(append([][]byte(nil), tc.before...), tc.last)
					}
					requireRecords(t, want, got)
					continue
				}
				requireCorruption(t, err, lastSeg, start)
				requireRecords(t, tc.before, got)

				w := openTest(t, fsys, tc.opts)
				require.NoError(t, w.Repair(fmt.Errorf("replay: %w", err)), "cut at %d", cut)
				require.NoError(t, w.Log([]byte("new")))
				require.NoError(t, w.Close())
				got, err = readAll(t, fsys, testDir)
				require.NoError(t, err, "cut at %d after repair", cut)
				requireRecords(t, append(append([][]byte(nil), tc.before...), []byte("new")), got)

				// The repaired segment ends in a whole, padded page.
				require.Zero(t, len(segmentBytes(t, fsys, lastSeg))%PageSize)
			}
		})
	}
}

// TestFlippedByte damages one byte inside a record in the middle of a
// multi-segment log: the error names that segment and the fragment's
// offset, and Repair keeps everything before the damaged record.
func TestFlippedByte(t *testing.T) {
	for _, size := range []int{5000, 20000} {
		fsys := vfs.NewMemFS()
		w := openTest(t, fsys, Options{SegmentSize: smallSegment})
		var recs [][]byte
		for i := range 40 {
			rec := bytes.Repeat([]byte{byte(i)}, size)
			recs = append(recs, rec)
			require.NoError(t, w.Log(rec))
		}
		require.NoError(t, w.Close())

		// Find the third record of segment 1 and count the records before it.
		const seg = 1
		sr, err := NewSegmentsRangeReader(fsys, testDir, 0, seg)
		require.NoError(t, err)
		r := NewReader(sr)
		var before, inSeg int
		var off int64
		for r.Next() {
			if r.Segment() == seg {
				if inSeg == 2 {
					break
				}
				inSeg++
				off = r.Offset()
			}
			before++
		}
		require.NoError(t, sr.Close())

		// Flip a byte in the data of the record's last fragment.
		data := segmentBytes(t, fsys, seg)
		fragStart := lastFragment(data, off)
		n := int64(binary.BigEndian.Uint16(data[fragStart+1:]))
		require.Positive(t, n)
		data[fragStart+headerSize+n/2] ^= 0x40
		require.NoError(t, fsys.WriteFile(SegmentName(testDir, seg), data, 0o666))

		got, err := readAll(t, fsys, testDir)
		cerr := requireCorruption(t, err, seg, fragStart)
		require.Contains(t, cerr.Error(), SegmentName(testDir, seg))
		require.Contains(t, cerr.Error(), fmt.Sprint(fragStart))
		requireRecords(t, recs[:before], got)

		w = openTest(t, fsys, Options{SegmentSize: smallSegment})
		require.NoError(t, w.Repair(err))
		first, last, err := w.Segments()
		require.NoError(t, err)
		require.Equal(t, 0, first)
		require.Equal(t, seg+1, last) // later segments are gone; a new one is active
		require.NoError(t, w.Log([]byte("new")))
		require.NoError(t, w.Close())
		got, err = readAll(t, fsys, testDir)
		require.NoError(t, err)
		requireRecords(t, append(append([][]byte(nil), recs[:before]...), []byte("new")), got)
	}
}

func TestRepairRefuses(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	for _, err := range []error{
		fmt.Errorf("plain"),
		corrupt.At("", 0, errors.New("stream")),
		corrupt.At(filepath.Join(testDir, "checkpoint.00000001"), 0, errors.New("not a segment")),
		corrupt.At(SegmentName("elsewhere", 0), 0, errors.New("other log")),
		corrupt.At(SegmentName(testDir, 5), 0, errors.New("after the active segment")),
	} {
		require.ErrorIs(t, w.Repair(err), ErrCannotRepair, "%v", err)
	}
	require.NoError(t, w.Log([]byte("still fine")))
}
