package wlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		err  error
	}{
		{Options{}, nil},
		{Options{SegmentSize: PageSize, Compression: CompressionSnappy, Sync: SyncEveryLog}, nil},
		{Options{SegmentSize: PageSize + 1}, ErrInvalidOptions},
		{Options{SegmentSize: -PageSize}, ErrInvalidOptions},
		{Options{Compression: "lz4"}, ErrInvalidOptions},
		{Options{Compression: "zstd"}, ErrUnsupportedCompression},
		{Options{Sync: 7}, ErrInvalidOptions},
	} {
		_, err := Open(nil, nil, vfs.NewMemFS(), testDir, tc.opts)
		if tc.err == nil {
			require.NoError(t, err, "%+v", tc.opts)
		} else {
			require.ErrorIs(t, err, tc.err, "%+v", tc.opts)
		}
	}
}

// TestGoldenFullFragment checks the exact bytes of a one-fragment record.
func TestGoldenFullFragment(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	require.NoError(t, w.Log([]byte("hello"), nil))
	// Before Close the page is written only as far as it is used.
	want := []byte{
		0x01, 0x00, 0x05, 0x9a, 0x71, 0xbb, 0x4c, 'h', 'e', 'l', 'l', 'o', // full, len 5, CRC-32C("hello")
		0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // full, len 0, CRC of nothing
	}
	require.Equal(t, want, segmentBytes(t, fsys, 0))
	require.NoError(t, w.Close())
	// Close pads the page with zeros.
	got := segmentBytes(t, fsys, 0)
	require.Len(t, got, PageSize)
	require.Equal(t, want, got[:len(want)])
	require.Equal(t, make([]byte, PageSize-len(want)), got[len(want):])
}

// TestGoldenSplitRecord checks the first/middle/last fragments of a record
// spanning three pages.
func TestGoldenSplitRecord(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{SegmentSize: 4 * PageSize})
	rec := make([]byte, 2*PageSize)
	for i := range rec {
		rec[i] = byte(i * 7)
	}
	require.NoError(t, w.Log(rec))
	require.NoError(t, w.Close())
	seg := segmentBytes(t, fsys, 0)
	require.Len(t, seg, 3*PageSize)

	const chunk = PageSize - headerSize // 32761 = 0x7ff9
	check := func(page int, typ byte, data []byte) {
		t.Helper()
		p := seg[page*PageSize:]
		require.Equal(t, typ, p[0], "page %d type", page)
		require.Equal(t, uint16(len(data)), binary.BigEndian.Uint16(p[1:]), "page %d length", page)
		require.Equal(t, crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)), binary.BigEndian.Uint32(p[3:]), "page %d crc", page)
		require.Equal(t, data, p[headerSize:headerSize+len(data)], "page %d data", page)
	}
	require.Equal(t, []byte{0x02, 0x7f, 0xf9}, seg[:3])
	check(0, 0x02, rec[:chunk])
	check(1, 0x03, rec[chunk:2*chunk])
	check(2, 0x04, rec[2*chunk:])
	require.Equal(t, 2*PageSize-2*chunk, 14)
	require.Equal(t, make([]byte, PageSize-headerSize-14), seg[2*PageSize+headerSize+14:])

	got, err := readAll(t, fsys, testDir)
	require.NoError(t, err)
	requireRecords(t, [][]byte{rec}, got)
}

// TestFragmentBoundaries logs records of sizes around page and segment
// boundaries, at different starting positions in a page, and reads them
// back.
func TestFragmentBoundaries(t *testing.T) {
	sizes := []int{0, 1, PageSize - headerSize - 1, PageSize - headerSize, PageSize - headerSize + 1,
		PageSize - 6, PageSize, PageSize + 1, 3 * PageSize, smallSegment/2 + 1, smallSegment, 2 * smallSegment}
	prefixes := []int{0, 1, 100, PageSize - 2*headerSize - 1, PageSize - 2*headerSize, PageSize - 2*headerSize + 1}
	for _, compression := range []CompressionType{CompressionNone, CompressionSnappy} {
		for _, prefix := range prefixes {
			fsys := vfs.NewMemFS()
			w := openTest(t, fsys, Options{SegmentSize: smallSegment, Compression: compression})
			rng := rand.New(rand.NewPCG(1, uint64(prefix)))
			var want [][]byte
			for i, n := range sizes {
				// A record of prefix bytes first, so the record under test
				// starts at a different place in its page.
				pre := testRecord(rng, 2*i, prefix)
				rec := testRecord(rng, 2*i+1, n)
				want = append(want, pre, rec)
				require.NoError(t, w.Log(pre, rec))
			}
			got, err := readAll(t, fsys, testDir)
			require.NoError(t, err, "before close, %s prefix %d", compression, prefix)
			requireRecords(t, want, got)
			require.NoError(t, w.Close())
			got, err = readAll(t, fsys, testDir)
			require.NoError(t, err, "after close, %s prefix %d", compression, prefix)
			requireRecords(t, want, got)
		}
	}
}

// TestPageTailPadding checks that a page tail too short for a header, or
// exactly a header's size, is padded instead of holding a fragment.
func TestPageTailPadding(t *testing.T) {
	for _, tail := range []int{1, headerSize - 1, headerSize} {
		fsys := vfs.NewMemFS()
		w := openTest(t, fsys, Options{})
		first := make([]byte, PageSize-headerSize-tail)
		require.NoError(t, w.Log(first, []byte("next")))
		require.NoError(t, w.Close())
		seg := segmentBytes(t, fsys, 0)
		require.Equal(t, make([]byte, tail), seg[PageSize-tail:PageSize], "tail %d", tail)
		require.Equal(t, byte(fragFull), seg[PageSize], "tail %d", tail)
		got, err := readAll(t, fsys, testDir)
		require.NoError(t, err)
		requireRecords(t, [][]byte{first, []byte("next")}, got)
	}
}

func TestRecordsDoNotSpanSegments(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{SegmentSize: smallSegment})
	rng := rand.New(rand.NewPCG(2, 2))
	var want [][]byte
	for i := range 60 {
		rec := testRecord(rng, i, rng.IntN(PageSize))
		want = append(want, rec)
		require.NoError(t, w.Log(rec))
	}
	require.NoError(t, w.Close())
	first, last, err := w.Segments()
	require.NoError(t, err)
	require.Equal(t, 0, first)
	require.Greater(t, last, 5)
	// Read every segment on its own: each must hold whole records only.
	var got [][]byte
	for i := first; i <= last; i++ {
		sr, err := NewSegmentsRangeReader(fsys, testDir, i, i)
		require.NoError(t, err)
		recs, err := collect(NewReader(sr))
		require.NoError(t, err, "segment %d", i)
		require.NoError(t, sr.Close())
		got = append(got, recs...)
		if i < last {
			require.LessOrEqual(t, len(segmentBytes(t, fsys, i)), smallSegment)
		}
	}
	requireRecords(t, want, got)
}

func TestOversizedRecordGetsOwnSegment(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{SegmentSize: smallSegment})
	big := bytes.Repeat([]byte{0xab}, 2*smallSegment)
	require.NoError(t, w.Log([]byte("a"), big, []byte("b")))
	require.NoError(t, w.Close())
	// "a" in 0, big alone in 1 (larger than a segment), "b" in 2.
	require.Len(t, segmentBytes(t, fsys, 0), PageSize)
	require.Greater(t, len(segmentBytes(t, fsys, 1)), smallSegment)
	got, err := readAll(t, fsys, testDir)
	require.NoError(t, err)
	requireRecords(t, [][]byte{[]byte("a"), big, []byte("b")}, got)
}

func TestRoundTripManySegments(t *testing.T) {
	for _, compression := range []CompressionType{CompressionNone, CompressionSnappy} {
		for _, sync := range []SyncPolicy{SyncOnSegmentCut, SyncEveryLog} {
			fsys := vfs.NewMemFS()
			opts := Options{SegmentSize: smallSegment, Compression: compression, Sync: sync}
			w := openTest(t, fsys, opts)
			rng := rand.New(rand.NewPCG(3, 3))
			var want [][]byte
			for i := range 200 {
				batch := make([][]byte, rng.IntN(4))
				for j := range batch {
					batch[j] = testRecord(rng, i, rng.IntN(2*PageSize))
				}
				want = append(want, batch...)
				require.NoError(t, w.Log(batch...))
				if i%50 == 49 {
					_, err := w.NextSegment()
					require.NoError(t, err)
				}
			}
			require.NoError(t, w.Close())
			_, last, err := w.Segments()
			require.NoError(t, err)
			require.Greater(t, last, 10)
			got, err := readAll(t, fsys, testDir)
			require.NoError(t, err)
			requireRecords(t, want, got)

			// Reopening starts a new segment and keeps the old records.
			w2 := openTest(t, fsys, opts)
			_, last2, err := w2.Segments()
			require.NoError(t, err)
			require.Equal(t, last+1, last2)
			require.NoError(t, w2.Log([]byte("after reopen")))
			require.NoError(t, w2.Close())
			got, err = readAll(t, fsys, testDir)
			require.NoError(t, err)
			requireRecords(t, append(want, []byte("after reopen")), got)
		}
	}
}

func TestSnappyRecordsAreCompressed(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{Compression: CompressionSnappy})
	rec := bytes.Repeat([]byte("compressible "), 1000)
	require.NoError(t, w.Log(rec, []byte("x")))
	seg := segmentBytes(t, fsys, 0)
	require.Equal(t, byte(fragFull|flagSnappy), seg[0])
	n := int(binary.BigEndian.Uint16(seg[1:]))
	require.Less(t, n, len(rec)/10)
	// A record that does not shrink is stored as it is.
	require.Equal(t, byte(fragFull), seg[headerSize+n])
	got, err := readAll(t, fsys, testDir)
	require.NoError(t, err)
	requireRecords(t, [][]byte{rec, []byte("x")}, got)
}

func TestTruncate(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	for range 5 {
		require.NoError(t, w.Log([]byte("r")))
		_, err := w.NextSegment()
		require.NoError(t, err)
	}
	require.NoError(t, w.Truncate(3))
	first, last, err := w.Segments()
	require.NoError(t, err)
	require.Equal(t, 3, first)
	require.Equal(t, 5, last)
	// The active segment (5) survives a too-large index.
	require.NoError(t, w.Truncate(100))
	first, last, err = w.Segments()
	require.NoError(t, err)
	require.Equal(t, 5, first)
	require.Equal(t, 5, last)
	require.NoError(t, w.Log([]byte("still works")))
}

func TestClosed(t *testing.T) {
	w := openTest(t, vfs.NewMemFS(), Options{})
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Close(), ErrClosed)
	require.ErrorIs(t, w.Log([]byte("x")), ErrClosed)
	require.ErrorIs(t, w.Sync(), ErrClosed)
	_, err := w.NextSegment()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, w.Truncate(1), ErrClosed)
}

func TestNotSequential(t *testing.T) {
	fsys := vfs.NewMemFS()
	require.NoError(t, fsys.MkdirAll(testDir, 0o777))
	require.NoError(t, fsys.WriteFile(SegmentName(testDir, 1), nil, 0o666))
	require.NoError(t, fsys.WriteFile(SegmentName(testDir, 3), nil, 0o666))
	_, err := Open(nil, nil, fsys, testDir, Options{})
	require.ErrorIs(t, err, ErrNotSequential)
	_, err = NewSegmentsReader(fsys, testDir)
	require.ErrorIs(t, err, ErrNotSequential)
}

// gather returns the value of every counter and gauge in reg, and the
// sample count of every histogram, by metric name.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		m := mf.GetMetric()[0]
		switch {
		case m.GetCounter() != nil:
			out[mf.GetName()] = m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			out[mf.GetName()] = m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			out[mf.GetName()] = float64(m.GetHistogram().GetSampleCount())
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	fsys := vfs.NewMemFS()
	w, err := Open(nil, reg, fsys, testDir, Options{SegmentSize: PageSize})
	require.NoError(t, err)
	// A second WL on the same registerer is refused, not a panic.
	_, err = Open(nil, reg, vfs.NewMemFS(), testDir, Options{})
	require.Error(t, err)

	require.NoError(t, w.Log(make([]byte, 100)))
	require.NoError(t, w.Log(make([]byte, PageSize-100))) // does not fit: new segment
	require.NoError(t, w.Sync())
	require.NoError(t, w.Truncate(1))
	m := gather(t, reg)
	require.Equal(t, 1.0, m["tsdb_wal_segment_current"])
	require.Equal(t, 1.0, m["tsdb_wal_completed_pages_total"])
	require.Equal(t, 3.0, m["tsdb_wal_page_flushes_total"])
	require.Equal(t, float64(PageSize+headerSize+PageSize-100), m["tsdb_wal_bytes_written_total"])
	require.Equal(t, 2.0, m["tsdb_wal_fsync_duration_seconds"]) // segment 0 at the cut, 1 on Sync
	require.Equal(t, 1.0, m["tsdb_wal_truncations_total"])
	require.Equal(t, 0.0, m["tsdb_wal_truncations_failed_total"])
	require.Equal(t, 0.0, m["tsdb_wal_writes_failed_total"])
	require.Equal(t, 0.0, m["tsdb_wal_corruptions_repaired_total"])
	require.NoError(t, w.Close())

	// Close unregisters, so the log can be reopened on the same registry.
	w, err = Open(nil, reg, fsys, testDir, Options{})
	require.NoError(t, err)
	require.Equal(t, 2.0, gather(t, reg)["tsdb_wal_segment_current"])
	require.NoError(t, w.Close())
}

func TestOpenRemovesTempCheckpoint(t *testing.T) {
	fsys := vfs.NewMemFS()
	require.NoError(t, fsys.MkdirAll(testDir+"/checkpoint.00000003.tmp", 0o777))
	require.NoError(t, fsys.WriteFile(testDir+"/checkpoint.00000003.tmp/00000000", []byte("junk"), 0o666))
	w := openTest(t, fsys, Options{})
	_, err := fsys.Stat(testDir + "/checkpoint.00000003.tmp")
	require.Error(t, err)
	require.NoError(t, w.Close())
}

func TestConcurrentLog(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{SegmentSize: smallSegment})
	const writers, perWriter = 4, 100
	errc := make(chan error, writers)
	for g := range writers {
		go func() {
			for i := range perWriter {
				// Each call logs a pair that must stay adjacent.
				a := []byte{byte(g), byte(i), 'a'}
				b := append(bytes.Repeat([]byte{byte(g)}, 1000+i*50), byte(i), 'b')
				if err := w.Log(a, b); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range writers {
		require.NoError(t, <-errc)
	}
	require.NoError(t, w.Close())
	got, err := readAll(t, fsys, testDir)
	require.NoError(t, err)
	require.Len(t, got, 2*writers*perWriter)
	next := make([]int, writers)
	for i := 0; i < len(got); i += 2 {
		a, b := got[i], got[i+1]
		g, n := int(a[0]), int(a[1])
		require.Equal(t, next[g], n, "writer %d out of order", g)
		require.Equal(t, byte('a'), a[2])
		require.Equal(t, []byte{byte(n), 'b'}, b[len(b)-2:], "pair split")
		require.Equal(t, byte(g), b[0])
		next[g]++
	}
}

func TestCorruptionErrMessage(t *testing.T) {
	err := error(corruptSegment("d", 3, 42, errors.New("x")))
	require.Contains(t, err.Error(), "00000003")
	require.Contains(t, err.Error(), "42")
	require.ErrorIs(t, err, corrupt.ErrCorrupt)
	dir, seg, off, ok := CorruptSegment(fmt.Errorf("wrapped: %w", err))
	require.True(t, ok)
	require.Equal(t, "d", dir)
	require.Equal(t, 3, seg)
	require.Equal(t, int64(42), off)
}

// TestMetricsPrefixAndActiveSegment: a second log on the same Registerer
// registers under its own prefix, with its own help text; ActiveSegment
// follows segment cuts.
func TestMetricsPrefixAndActiveSegment(t *testing.T) {
	reg := prometheus.NewRegistry()
	fsys := vfs.NewMemFS()
	wal, err := Open(nil, reg, fsys, "wal", Options{})
	require.NoError(t, err)
	defer wal.Close()
	wbl, err := Open(nil, reg, fsys, "wbl", Options{MetricsPrefix: "tsdb_wbl_", MetricsHelp: "out-of-order log"})
	require.NoError(t, err)
	defer wbl.Close()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	help := map[string]string{}
	for _, mf := range mfs {
		help[mf.GetName()] = mf.GetHelp()
	}
	require.Equal(t, "Index of the write-ahead log segment being written.", help["tsdb_wal_segment_current"])
	require.Equal(t, "Index of the out-of-order log segment being written.", help["tsdb_wbl_segment_current"])
	require.Equal(t, "Out-of-order log pages written in full.", help["tsdb_wbl_completed_pages_total"])

	require.Equal(t, 0, wbl.ActiveSegment())
	n, err := wbl.NextSegment()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1, wbl.ActiveSegment())
}
