package wlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// FuzzReader feeds arbitrary bytes to the Reader as a segment file and as a
// plain stream. Neither may panic; both must return the same records and
// fail at the same offset; and the records can only be as large as the
// input allows (snappy expansion included).
func FuzzReader(f *testing.F) {
	seeds := [][]byte{
		nil,
		frag(fragFull, []byte("hello")),
		cat(frag(fragFull, []byte("a")), make([]byte, 20), frag(fragFull, nil)),
		// A record split over a page boundary: a page of zeros with a
		// short record at its end would be the same size, so the fuzzer
		// gets one such input and can mutate the boundary area.
		cat(frag(fragFull, make([]byte, PageSize-2*headerSize-10)), frag(fragFirst, make([]byte, 10)), frag(fragLast, []byte("end"))),
		frag(fragFull|flagSnappy, snappy.Encode(nil, bytes.Repeat([]byte("abc"), 100))),
		frag(fragFull|flagZstd, []byte{1, 2, 3}),
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Three pages cover every page-boundary case; longer inputs only
		// slow the fuzzer down (minimizing them takes very long).
		if len(data) > 3*PageSize {
			data = data[:3*PageSize]
		}
		fsys := vfs.NewMemFS()
		require.NoError(t, fsys.MkdirAll(testDir, 0o777))
		require.NoError(t, fsys.WriteFile(SegmentName(testDir, 0), data, 0o666))
		sr, err := NewSegmentsReader(fsys, testDir)
		require.NoError(t, err)
		defer sr.Close()
		segRecs, segErr := collect(NewReader(sr))
		streamRecs, streamErr := collect(NewReader(bytes.NewReader(data)))

		require.Len(t, streamRecs, len(segRecs), "segment reader got %d records, stream reader %d", len(segRecs), len(streamRecs))
		total := 0
		for i := range segRecs {
			require.True(t, bytes.Equal(segRecs[i], streamRecs[i]), "record %d differs between readers", i)
			total += len(segRecs[i])
		}
		require.LessOrEqual(t, total, maxSnappyExpansion*len(data), "%d record bytes from %d input bytes", total, len(data))
		require.Equal(t, segErr == nil, streamErr == nil, "errors differ: %v vs %v", segErr, streamErr)
		var c1, c2 *corrupt.Error
		require.Equal(t, errors.As(segErr, &c1), errors.As(streamErr, &c2), "corruption differs: %v vs %v", segErr, streamErr)
		if c1 != nil {
			require.False(t, c1.Offset != c2.Offset || c1.File != SegmentName(testDir, 0) || c2.File != "", "corruption positions differ: %v vs %v", c1, c2)
			require.ErrorIs(t, segErr, corrupt.ErrCorrupt, "corruption does not wrap corrupt.ErrCorrupt")
		}
	})
}

// FuzzLogRoundTrip logs records whose sizes come from the input, across
// small segments, with and without snappy, and reads them back.
func FuzzLogRoundTrip(f *testing.F) {
	f.Add([]byte{0, 1, 2, 255, 128, 7}, false, uint64(1))
	f.Add([]byte{200, 200, 200, 0, 0, 1}, true, uint64(2))
	f.Fuzz(func(t *testing.T, sizes []byte, compress bool, seed uint64) {
		if len(sizes) > 16 {
			sizes = sizes[:16]
		}
		opts := Options{SegmentSize: 2 * PageSize}
		if compress {
			opts.Compression = CompressionSnappy
		}
		fsys := vfs.NewMemFS()
		w, err := Open(nil, nil, fsys, testDir, opts)
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(seed, seed))
		var want [][]byte
		for i, s := range sizes {
			// Sizes up to ~2 pages, with a bias to page-boundary sizes.
			n := int(s) * 257
			if s%2 == 1 {
				n = PageSize - int(s%16)
			}
			rec := make([]byte, n)
			for j := range rec {
				if rng.IntN(3) == 0 {
					rec[j] = byte(rng.Uint32())
				}
			}
			if n >= 4 {
				binary.BigEndian.PutUint32(rec, uint32(i))
			}
			want = append(want, rec)
			require.NoError(t, w.Log(rec))
		}
		require.NoError(t, w.Close())
		sr, err := NewSegmentsReader(fsys, testDir)
		require.NoError(t, err)
		defer sr.Close()
		got, err := collect(NewReader(sr))
		require.NoError(t, err)
		require.Len(t, got, len(want), "got %d records, want %d", len(got), len(want))
		for i := range want {
			require.True(t, bytes.Equal(got[i], want[i]), "record %d differs", i)
		}
	})
}
