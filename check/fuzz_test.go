package check

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// FuzzParseMeta: any bytes parse or fail without panicking, and whatever
// parses survives being written and parsed again.
func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"ulid":"01HQZ5V7M6X1Y2Z3A4B5C6D7E8","minTime":0,"maxTime":7200000,"stats":{"numSamples":5,"numSeries":1,"numChunks":1},"compaction":{"level":1,"sources":["01HQZ5V7M6X1Y2Z3A4B5C6D7E8"]},"version":1}`))
	f.Add([]byte(`{"version":1} x`))
	f.Add([]byte(`{"minTime":"0"}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, off, err := parseMeta(b)
		if err != nil {
			require.ErrorIs(t, err, errMeta)
			require.LessOrEqual(t, off, int64(len(b)))
			return
		}
		again, err := json.Marshal(m)
		require.NoError(t, err)
		m2, _, err := parseMeta(again)
		require.NoError(t, err)
		// Compared as JSON: an empty list and none encode alike.
		again2, err := json.Marshal(m2)
		require.NoError(t, err)
		require.JSONEq(t, string(again), string(again2))
	})
}

// FuzzMetaRoundTrip: a meta.json written from arbitrary field values
// parses back to the same values.
func FuzzMetaRoundTrip(f *testing.F) {
	f.Add(uint64(1), int64(0), int64(7200000), uint64(10), uint64(2), 1, "01HQZ5V7M6X1Y2Z3A4B5C6D7E8")
	f.Add(uint64(0), int64(-5), int64(-9), uint64(0), uint64(0), 0, "\xff\"}")
	f.Fuzz(func(t *testing.T, seed uint64, mint, maxt int64, samples, series uint64, level int, source string) {
		var entropy [16]byte
		binary.LittleEndian.PutUint64(entropy[:], seed)
		id := ulid.MustNew(seed%(1<<48), bytes.NewReader(entropy[:]))
		var m blockMeta
		m.ULID, m.MinTime, m.MaxTime, m.Version = id.String(), mint, maxt, 1
		m.Stats.NumSamples, m.Stats.NumSeries = samples, series
		m.Compaction.Level = level
		m.Compaction.Sources = []string{source}
		b, err := json.MarshalIndent(m, "", "\t")
		require.NoError(t, err)
		got, _, err := parseMeta(b)
		require.NoError(t, err)
		// JSON replaces invalid UTF-8 with U+FFFD; compare with what was
		// written.
		var want blockMeta
		require.NoError(t, json.Unmarshal(b, &want))
		require.Equal(t, want, got)
		require.Equal(t, m.ULID, got.ULID)
		require.Equal(t, mint, got.MinTime)
		require.Equal(t, samples, got.Stats.NumSamples)
	})
}

// FuzzWALRecordAfter: arbitrary segment bytes and offsets never panic, and
// a segment written by wlog holding records is found to hold them.
func FuzzWALRecordAfter(f *testing.F) {
	f.Add([]byte{1, 0, 1, 0, 0, 0, 0, 9}, int64(-1), uint8(3), uint16(10))
	f.Add(make([]byte, 64), int64(5), uint8(1), uint16(40000))
	f.Fuzz(func(t *testing.T, b []byte, off int64, nrec uint8, size uint16) {
		off = max(off, -1)
		_ = walRecordAfter(b, off)
		require.False(t, walRecordAfter(make([]byte, len(b)), -1), "zeros hold no record")

		seg := writeWALSegment(t, int(nrec%8)+1, int(size)+1)
		require.True(t, walRecordAfter(seg, -1))
		// Damaging the first byte of the first fragment leaves the later
		// records (if any) to be found.
		if nrec%8 > 0 {
			seg[0] ^= 0xff
			require.True(t, walRecordAfter(seg, 0))
		}
	})
}

// writeWALSegment returns the bytes of a WAL segment holding n records of
// size bytes each.
func writeWALSegment(t *testing.T, n, size int) []byte {
	t.Helper()
	fsys := vfs.NewMemFS()
	w, err := wlog.Open(nil, nil, fsys, "wal", wlog.Options{SegmentSize: 1 << 20})
	require.NoError(t, err)
	for i := range n {
		rec := make([]byte, size)
		for j := range rec {
			rec[j] = byte(i + j)
		}
		require.NoError(t, w.Log(rec))
	}
	require.NoError(t, w.Close())
	b, err := fsys.ReadFile(wlog.SegmentName("wal", 0))
	require.NoError(t, err)
	return b
}

// FuzzChunkRecords: nextChunkRecord never panics on arbitrary bytes, and
// walks exactly the records a SegmentWriter wrote.
func FuzzChunkRecords(f *testing.F) {
	f.Add([]byte{0x85, 0xbd, 0x40, 0xdd, 1, 0, 0, 0, 3, 1, 0, 1, 2, 0, 0, 0, 0}, uint8(3), uint8(10))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, nchunks, nsamples uint8) {
		for off := 0; off < len(b); {
			next, _, ok := nextChunkRecord(b, off)
			if !ok {
				break
			}
			require.Greater(t, next, off)
			require.LessOrEqual(t, next, len(b))
			off = next
		}
		_ = validChunkHeader(b)

		fsys := vfs.NewMemFS()
		cw, err := chunkseg.NewSegmentWriter(fsys, "chunks")
		require.NoError(t, err)
		metas := make([]chunks.Meta, int(nchunks%16)+1)
		for i := range metas {
			c := chunks.NewXORChunk()
			app, err := c.Appender()
			require.NoError(t, err)
			for s := range int(nsamples%200) + 1 {
				app.Append(int64(s*1000+i), float64(s*i))
			}
			metas[i].Chunk = c
		}
		require.NoError(t, cw.WriteChunks(metas...))
		require.NoError(t, cw.Close())
		seg, err := fsys.ReadFile(filepath.Join("chunks", chunkseg.SegmentFileName(1)))
		require.NoError(t, err)
		require.True(t, validChunkHeader(seg))
		off, n := chunkseg.SegmentHeaderSize, 0
		for off < len(seg) {
			_, want := chunkseg.SplitBlockRef(metas[n].Ref)
			require.Equal(t, int(want), off)
			next, crcOK, ok := nextChunkRecord(seg, off)
			require.True(t, ok)
			require.True(t, crcOK)
			off = next
			n++
		}
		require.Equal(t, len(metas), n)
	})
}
