package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// FuzzReader opens arbitrary bytes as an index and reads everything it
// can. It must fail cleanly, never panic, and opening must not allocate
// more than a small multiple of the input's size.
func FuzzReader(f *testing.F) {
	f.Add(goldenIndex(f))
	fsys := vfs.NewMemFS()
	writeIndex(f, fsys, "small", []labels.Labels{
		labels.FromStrings("__name__", "up", "job", "a"),
		labels.FromStrings("__name__", "up", "job", "b"),
		labels.FromStrings("__name__", "x", "i", "1", "job", "b"),
	})
	small, err := fsys.ReadFile("small")
	require.NoError(f, err)
	f.Add(small)
	f.Add([]byte{})
	f.Add([]byte{0xBA, 0xAA, 0xD7, 0x00, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkReader(t, b)
		// Checksums stop almost every mutation at the door; also try the
		// input with its section checksums made valid, to reach the parsers.
		checkReader(t, fixChecksums(b))
	})
}

// fixChecksums returns a copy of b whose TOC, symbol table and postings
// offset table checksums are correct, as far as their offsets make sense.
func fixChecksums(b []byte) []byte {
	b = slices.Clone(b)
	if len(b) < headerLen+tocLen {
		return b
	}
	end := len(b) - tocLen
	t := b[end:]
	for _, i := range []int{0, 5} { // symbols, postings offset table
		off := binary.BigEndian.Uint64(t[8*i:])
		if off > uint64(end) || uint64(end)-off < 8 {
			continue
		}
		size := uint64(binary.BigEndian.Uint32(b[off:]))
		if size > uint64(end)-off-8 {
			continue
		}
		binary.BigEndian.PutUint32(b[off+4+size:], crc32.Checksum(b[off+4:off+4+size], castagnoli))
	}
	binary.BigEndian.PutUint32(t[tocLen-4:], crc32.Checksum(t[:tocLen-4], castagnoli))
	return b
}

// checkReader opens b and reads everything: failing cleanly is fine,
// panicking or allocating beyond the input's size is not.
func checkReader(t *testing.T, b []byte) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReader(b)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	require.LessOrEqual(t, alloc, uint64(64*len(b)+64<<10), "opening %d bytes allocated %d bytes", len(b), alloc)
	if err != nil {
		require.True(t, errors.Is(err, corrupt.ErrCorrupt) || errors.Is(err, ErrUnsupportedVersion), "unexpected error class: %v", err)
		return
	}
	_ = readEverything(r)
	builder := labels.NewScratchBuilder(4)
	var chks []ChunkMeta
	for ref := range uint64(len(b)/16 + 1) {
		_ = r.Series(ref, &builder, &chks)
		_ = builder.Labels()
	}
	require.NoError(t, r.Close())
}

// FuzzPostingsRoundTrip encodes a postings list built from the input, in
// the file's format, and checks that decoding gives it back.
func FuzzPostingsRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 1, 0xff, 0xff})
	f.Add([]byte("some bytes that become deltas"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Each pair of bytes is the gap (>= 1) to the next reference.
		var refs []uint32
		var cur uint32
		for i := 0; i+1 < len(b); i += 2 {
			gap := uint32(binary.BigEndian.Uint16(b[i:])) + 1
			if i > 0 && cur > ^uint32(0)-gap {
				break
			}
			if i > 0 {
				cur += gap
			} else {
				cur = gap - 1
			}
			refs = append(refs, cur)
		}
		var enc []byte
		_, err := encodePostingsList(make([]byte, 0, 16), refs, func(p []byte) error {
			enc = append(enc, p...)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, enc, 12+4*len(refs))
		p, err := decodePostingsList(enc, 0)
		require.NoError(t, err)
		got := expand(t, p)
		want := make([]uint64, 0, len(refs))
		for _, r := range refs {
			want = append(want, uint64(r))
		}
		require.True(t, slices.Equal(want, got), "want %v got %v", want, got)
		// Seek to every value and just past it.
		for i, r := range want {
			p, _ := decodePostingsList(enc, 0)
			require.True(t, p.Seek(r) && p.At() == r, "seek %d", r)
			ok := p.Seek(r + 1)
			require.Equal(t, i+1 < len(want), ok)
		}
		// Any damage to the encoding is caught.
		if len(enc) > 0 {
			bad := slices.Clone(enc)
			bad[len(b)%len(bad)] ^= 1
			_, err := decodePostingsList(bad, 0)
			require.True(t, err != nil, "damage not detected")
		}
	})
}

// FuzzIndexRoundTrip writes the label sets described by the input and
// checks that the reader returns exactly them.
func FuzzIndexRoundTrip(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte("a fairly long seed to make several series out of, with values"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Each byte makes a label set: bits pick which of four names are
		// set, and the byte itself picks values.
		names := []string{"__name__", "a", "b\xff", ""}
		seen := map[string]bool{}
		var sets []labels.Labels
		for i, c := range b {
			var kv []string
			for j, n := range names[:3] {
				if c&(1<<j) != 0 {
					kv = append(kv, n, fmt.Sprint(int(c>>3)*(j+1)+i%3))
				}
			}
			if c&8 != 0 {
				kv = append(kv, "z", string(b[:i%7]))
			}
			ls := labels.FromStrings(kv...)
			if !seen[ls.String()] {
				seen[ls.String()] = true
				sets = append(sets, ls)
			}
		}
		slices.SortFunc(sets, labels.Compare)
		fsys := vfs.NewMemFS()
		writeIndex(t, fsys, "index", sets)
		r, err := NewFileReader(fsys, "index")
		require.NoError(t, err)
		defer r.Close()
		all, err := r.AllPostings()
		require.NoError(t, err)
		refs := expand(t, all)
		require.Len(t, refs, len(sets))
		builder := labels.NewScratchBuilder(4)
		var chks []ChunkMeta
		for i, ref := range refs {
			require.NoError(t, r.Series(ref, &builder, &chks))
			require.True(t, labels.Equal(sets[i], builder.Labels()), "series %d: want %s got %s", i, sets[i], builder.Labels())
			require.True(t, slices.Equal(testChunks(i), chks), "series %d chunks", i)
		}
		require.NoError(t, readEverything(r))
		model := &seriesModel{refs: refs, sets: sets}
		for _, n := range []string{"a", "z", "__name__"} {
			vals, err := r.SortedLabelValues(n)
			require.NoError(t, err)
			for _, v := range vals {
				m := labels.MustNewMatcher(labels.MatchEqual, n, v)
				p, err := PostingsForMatchers(r, m)
				require.NoError(t, err)
				require.Equal(t, model.eval([]*labels.Matcher{m}), expand(t, p))
			}
		}
	})
}
