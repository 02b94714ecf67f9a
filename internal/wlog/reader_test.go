package wlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// frag builds one fragment by hand.
func frag(typ byte, data []byte) []byte {
	h := make([]byte, headerSize, headerSize+len(data))
	h[0] = typ
	binary.BigEndian.PutUint16(h[1:], uint16(len(data)))
	binary.BigEndian.PutUint32(h[3:], crc32.Checksum(data, castagnoli))
	return append(h, data...)
}

// segmentWith writes a one-segment log holding data and returns its MemFS.
func segmentWith(t *testing.T, data []byte) *vfs.MemFS {
	t.Helper()
	fsys := vfs.NewMemFS()
	require.NoError(t, fsys.MkdirAll(testDir, 0o777))
	require.NoError(t, fsys.WriteFile(SegmentName(testDir, 0), data, 0o666))
	return fsys
}

func requireCorruption(t *testing.T, err error, seg int, off int64) *corrupt.Error {
	t.Helper()
	var cerr *corrupt.Error
	require.ErrorAs(t, err, &cerr)
	require.ErrorIs(t, err, corrupt.ErrCorrupt)
	_, gotSeg, gotOff, ok := CorruptSegment(err)
	if seg < 0 {
		require.False(t, ok, "segment: %v", err)
		gotSeg, gotOff = -1, cerr.Offset
	}
	require.Equal(t, seg, gotSeg, "segment: %v", err)
	require.Equal(t, off, gotOff, "offset: %v", err)
	return cerr
}

func TestReaderRejects(t *testing.T) {
	pad := func(b []byte) []byte { return append(b, make([]byte, PageSize-len(b))...) }
	bad := frag(fragFull, []byte("abc"))
	bad[headerSize] ^= 1
	first := frag(fragFirst, make([]byte, PageSize-headerSize))
	for _, tc := range []struct {
		name string
		data []byte
		off  int64
	}{
		{"checksum", cat(frag(fragFull, []byte("ok")), bad), 9},
		{"unknown fragment type 5", frag(5, []byte("x")), 0},
		{"unknown fragment type 7", frag(7, nil), 0},
		{"unknown flag bit", frag(fragFull|0x20, []byte("x")), 0},
		{"both compression flags", frag(fragFull|flagSnappy|flagZstd, []byte("x")), 0},
		{"middle without first", frag(fragMiddle, []byte("x")), 0},
		{"last without first", frag(fragLast, []byte("x")), 0},
		{"full inside record", cat(first, frag(fragFull, []byte("x"))), PageSize},
		{"first inside record", cat(first, frag(fragFirst, make([]byte, PageSize-headerSize))), PageSize},
		{"padding inside record", cat(first, make([]byte, PageSize)), PageSize},
		{"padding inside record 2", cat(first, make([]byte, 10)), PageSize},
		{"first not filling page", pad(frag(fragFirst, []byte("x"))), 0},
		{"flags change inside record", cat(first, frag(fragLast|flagSnappy, []byte("x"))), PageSize},
		{"length past page end", cat(pad(frag(fragFull, nil))[:PageSize-10], []byte{fragFull, 0x00, 0x04, 0, 0, 0, 0, 1, 2, 3, 4}), PageSize - 10},
		{"non-zero padding", pad(cat(frag(fragFull, []byte("a")), []byte{0, 0, 1})), 10},
		{"non-zero short tail", cat(frag(fragFull, make([]byte, PageSize-headerSize-3)), []byte{0, 0, 9}), PageSize - 1},
		{"torn header", frag(fragFull, []byte("abc"))[:5], 0},
		{"torn data", frag(fragFull, []byte("abc"))[:9], 0},
		{"torn after first", first, 0},
		{"bad snappy", frag(fragFull|flagSnappy, []byte{0x05, 0x00}), 0},
		{"snappy claims too much", frag(fragFull|flagSnappy, []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := segmentWith(t, tc.data)
			_, err := readAll(t, fsys, testDir)
			requireCorruption(t, err, 0, tc.off)

			// A plain stream reports the same offsets, without segment.
			_, err = collect(NewReader(bytes.NewReader(tc.data)))
			requireCorruption(t, err, -1, tc.off)
		})
	}
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestReaderAccepts covers valid layouts a writer may produce.
func TestReaderAccepts(t *testing.T) {
	big := bytes.Repeat([]byte{7}, PageSize)
	split := cat(frag(fragFirst, big[:PageSize-headerSize]), frag(fragLast, big[PageSize-headerSize:]))
	for _, tc := range []struct {
		name string
		data []byte
		want [][]byte
	}{
		{"empty", nil, nil},
		{"all zero page", make([]byte, PageSize), nil},
		{"short zero page", make([]byte, 100), nil},
		{"empty record", frag(fragFull, nil), [][]byte{{}}},
		{"unpadded end", cat(frag(fragFull, []byte("a")), frag(fragFull, []byte("b"))), [][]byte{[]byte("a"), []byte("b")}},
		{"partial padding", cat(frag(fragFull, []byte("a")), make([]byte, 3)), [][]byte{[]byte("a")}},
		{"split record", split, [][]byte{big}},
		// Prometheus writes an empty first fragment when exactly a header
		// fits in the page.
		{"empty first fragment", cat(frag(fragFull, make([]byte, PageSize-2*headerSize)), frag(fragFirst, nil), frag(fragLast, []byte("z"))),
			[][]byte{make([]byte, PageSize-2*headerSize), []byte("z")}},
		{"empty snappy record", frag(fragFull|flagSnappy, nil), [][]byte{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, segmentWith(t, tc.data), testDir)
			require.NoError(t, err)
			requireRecords(t, tc.want, got)
			got, err = collect(NewReader(bytes.NewReader(tc.data)))
			require.NoError(t, err)
			requireRecords(t, tc.want, got)
		})
	}
}

func TestReaderZstd(t *testing.T) {
	data := cat(frag(fragFull, []byte("a")), frag(fragFull|flagZstd, []byte{0x28, 0xb5, 0x2f, 0xfd}))
	got, err := readAll(t, segmentWith(t, data), testDir)
	require.ErrorIs(t, err, ErrUnsupportedCompression)
	require.Contains(t, err.Error(), "zstd")
	require.Contains(t, err.Error(), "00000000")
	var cerr *corrupt.Error
	require.False(t, errors.As(err, &cerr), "zstd records are valid data, not corruption")
	requireRecords(t, [][]byte{[]byte("a")}, got)

	// Repair refuses it rather than deleting valid data.
	fsys := segmentWith(t, data)
	w := openTest(t, fsys, Options{})
	require.ErrorIs(t, w.Repair(err), ErrCannotRepair)
}

// TestReaderSegmentBoundary checks that a record torn at the end of a
// segment is reported there, even when later segments follow.
func TestReaderSegmentBoundary(t *testing.T) {
	fsys := vfs.NewMemFS()
	require.NoError(t, fsys.MkdirAll(testDir, 0o777))
	first := frag(fragFirst, make([]byte, PageSize-headerSize))
	require.NoError(t, fsys.WriteFile(SegmentName(testDir, 0), cat(frag(fragFull, []byte("a")), make([]byte, PageSize-8), first), 0o666))
	require.NoError(t, fsys.WriteFile(SegmentName(testDir, 1), frag(fragLast, []byte("b")), 0o666))
	got, err := readAll(t, fsys, testDir)
	requireCorruption(t, err, 0, PageSize)
	requireRecords(t, [][]byte{[]byte("a")}, got)
}

// TestSegmentsReaderAsStream reads segments through the io.Reader side of
// the segments reader (hiding its type), which pads short segments.
func TestSegmentsReaderAsStream(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{SegmentSize: smallSegment})
	rng := rand.New(rand.NewPCG(4, 4))
	var want [][]byte
	for i := range 50 {
		rec := testRecord(rng, i, rng.IntN(PageSize))
		want = append(want, rec)
		require.NoError(t, w.Log(rec))
	}
	// Not closed: the last segment ends mid-page.
	sr, err := NewSegmentsReader(fsys, testDir)
	require.NoError(t, err)
	defer sr.Close()
	got, err := collect(NewReader(struct{ io.Reader }{sr}))
	require.NoError(t, err)
	requireRecords(t, want, got)
}

func TestSegmentsRangeReader(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	for i := range 5 {
		require.NoError(t, w.Log([]byte{byte(i)}))
		_, err := w.NextSegment()
		require.NoError(t, err)
	}
	for _, tc := range []struct{ first, last, from, to int }{
		{-1, -1, 0, 4}, {2, -1, 2, 4}, {-1, 2, 0, 2}, {1, 3, 1, 3}, {3, 3, 3, 3}, {7, 9, 0, -1},
	} {
		sr, err := NewSegmentsRangeReader(fsys, testDir, tc.first, tc.last)
		require.NoError(t, err)
		r := NewReader(sr)
		var got []int
		for r.Next() {
			require.Equal(t, int(r.Record()[0]), r.Segment())
			require.Equal(t, int64(headerSize+1), r.Offset())
			got = append(got, int(r.Record()[0]))
		}
		require.NoError(t, r.Err())
		require.NoError(t, sr.Close())
		var want []int
		for i := tc.from; i <= tc.to; i++ {
			want = append(want, i)
		}
		require.Equal(t, want, got, "%+v", tc)
	}
	_, err := NewSegmentsRangeReader(fsys, testDir, 3, 2)
	require.ErrorIs(t, err, ErrInvalidRange)
}

// TestReaderIOError checks that read errors are passed on, not turned into
// corruption.
func TestReaderIOError(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	require.NoError(t, w.Log([]byte("a")))
	require.NoError(t, w.Close())
	eio := errors.New("injected EIO")
	fsys.SetHook(func(op vfs.Op, _ string) error {
		if op == vfs.OpRead {
			return eio
		}
		return nil
	})
	_, err := readAll(t, fsys, testDir)
	require.ErrorIs(t, err, eio)
	var cerr *corrupt.Error
	require.False(t, errors.As(err, &cerr))
}
