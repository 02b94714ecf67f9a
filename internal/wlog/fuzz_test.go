package wlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"

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
		if err := fsys.MkdirAll(testDir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(SegmentName(testDir, 0), data, 0o666); err != nil {
			t.Fatal(err)
		}
		sr, err := NewSegmentsReader(fsys, testDir)
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Close()
		segRecs, segErr := collect(NewReader(sr))
		streamRecs, streamErr := collect(NewReader(bytes.NewReader(data)))

		if len(segRecs) != len(streamRecs) {
			t.Fatalf("segment reader got %d records, stream reader %d", len(segRecs), len(streamRecs))
		}
		total := 0
		for i := range segRecs {
			if !bytes.Equal(segRecs[i], streamRecs[i]) {
				t.Fatalf("record %d differs between readers", i)
			}
			total += len(segRecs[i])
		}
		if total > maxSnappyExpansion*len(data) {
			t.Fatalf("%d record bytes from %d input bytes", total, len(data))
		}
		if (segErr == nil) != (streamErr == nil) {
			t.Fatalf("errors differ: %v vs %v", segErr, streamErr)
		}
		var c1, c2 *corrupt.Error
		if errors.As(segErr, &c1) != errors.As(streamErr, &c2) {
			t.Fatalf("corruption differs: %v vs %v", segErr, streamErr)
		}
		if c1 != nil {
			if c1.Offset != c2.Offset || c1.File != SegmentName(testDir, 0) || c2.File != "" {
				t.Fatalf("corruption positions differ: %v vs %v", c1, c2)
			}
			if !errors.Is(segErr, corrupt.ErrCorrupt) {
				t.Fatalf("corruption does not wrap corrupt.ErrCorrupt: %v", segErr)
			}
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
		if err != nil {
			t.Fatal(err)
		}
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
			if err := w.Log(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sr, err := NewSegmentsReader(fsys, testDir)
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Close()
		got, err := collect(NewReader(sr))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("got %d records, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d differs", i)
			}
		}
	})
}
