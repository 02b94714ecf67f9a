package tombstones

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

func mustEqual(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), fmt.Sprint(msg...))
}

// dump lists the contents of r as ref:intervals strings.
func dump(t testing.TB, r Reader) []string {
	t.Helper()
	var out []string
	require.NoError(t, r.Iter(func(ref uint64, ivs Intervals) error {
		out = append(out, fmt.Sprint(ref, ivs))
		return nil
	}))
	return out
}

func TestMemTombstones(t *testing.T) {
	m := NewMemTombstones()
	m.AddInterval(7, Interval{10, 20}, Interval{30, 40})
	m.AddInterval(3, Interval{1, 2})
	m.AddInterval(7, Interval{21, 29}) // joins both neighbours
	m.AddInterval(9, Interval{5, 4})   // empty: ignored
	mustEqual(t, []string{"3 [{1 2}]", "7 [{10 40}]"}, dump(t, m))
	mustEqual(t, uint64(2), m.Total())
	ivs, err := m.Get(7)
	require.NoError(t, err)
	mustEqual(t, Intervals{{10, 40}}, ivs)
	ivs, err = m.Get(9)
	require.NoError(t, err)
	mustEqual(t, 0, len(ivs))

	m.AddInterval(3, Interval{100, 200}, Interval{300, 400})
	m.TruncateBefore(150)
	mustEqual(t, []string{"3 [{100 200} {300 400}]"}, dump(t, m))
	m.TruncateBefore(250)
	mustEqual(t, []string{"3 [{300 400}]"}, dump(t, m))
	m.AddInterval(4, Interval{0, 1})
	m.DeleteTombstones(map[uint64]struct{}{3: {}, 99: {}})
	mustEqual(t, []string{"4 [{0 1}]"}, dump(t, m))

	stop := errors.New("stop")
	mustEqual(t, stop, m.Iter(func(uint64, Intervals) error { return stop }))
	// Iter's callback may call back into the MemTombstones.
	require.NoError(t, m.Iter(func(ref uint64, _ Intervals) error {
		m.AddInterval(ref+1, Interval{1, 1})
		return nil
	}))
	mustEqual(t, uint64(2), m.Total())
}

func TestMemTombstonesGetIsSnapshot(t *testing.T) {
	m := NewMemTombstones()
	m.AddInterval(1, Interval{0, 10})
	ivs, _ := m.Get(1)
	m.AddInterval(1, Interval{5, 20}, Interval{30, 31})
	m.TruncateBefore(25)
	mustEqual(t, Intervals{{0, 10}}, ivs)
}

func TestMemTombstonesConcurrent(t *testing.T) {
	m := NewMemTombstones()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				m.AddInterval(uint64(i%10), Interval{int64(i * 10), int64(i*10 + w)})
				_, _ = m.Get(uint64(i % 10))
				_ = m.Total()
				if i%100 == 0 {
					m.TruncateBefore(int64(i))
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, m.Iter(func(_ uint64, ivs Intervals) error {
		for i := 1; i < len(ivs); i++ {
			if ivs[i].Mint <= ivs[i-1].Maxt+1 {
				return fmt.Errorf("unmerged %v", ivs)
			}
		}
		return nil
	}))
}

// TestGolden checks the encoding byte by byte against the layout of
// tombstones.md: magic, version, (uvarint ref, varint mint, varint maxt)*,
// CRC32C of the entries only.
func TestGolden(t *testing.T) {
	m := NewMemTombstones()
	m.AddInterval(300, Interval{-1, 2})
	m.AddInterval(1, Interval{0, 63}, Interval{100, 64 + 100})
	got, err := Encode(m)
	require.NoError(t, err)
	entries := []byte{
		0x01, 0x00, 0x7e, // ref 1, mint 0, maxt 63 (zigzag 126)
		0x01, 0xc8, 0x01, 0xc8, 0x02, // ref 1, mint 100 (200), maxt 164 (328)
		0xac, 0x02, 0x01, 0x04, // ref 300, mint -1 (zigzag 1), maxt 2 (4)
	}
	want := []byte{0x01, 0x30, 0xBA, 0x30, 0x01}
	want = append(want, entries...)
	want = binary.BigEndian.AppendUint32(want, crc32.Checksum(entries, crc32.MakeTable(crc32.Castagnoli)))
	mustEqual(t, want, got)

	d, err := Decode(got)
	require.NoError(t, err)
	mustEqual(t, dump(t, m), dump(t, d))
}

func TestDecodeMergesAndOrders(t *testing.T) {
	// Entries out of order, overlapping and adjacent, and one empty one.
	body := []byte{}
	for _, e := range [][3]int64{{5, 10, 20}, {2, 0, 0}, {5, 0, 9}, {5, 30, 40}, {5, 41, 41}, {5, 50, 45}} {
		body = binary.AppendUvarint(body, uint64(e[0]))
		body = binary.AppendVarint(body, e[1])
		body = binary.AppendVarint(body, e[2])
	}
	b := append([]byte{0x01, 0x30, 0xBA, 0x30, 0x01}, body...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
	d, err := Decode(b)
	require.NoError(t, err)
	mustEqual(t, []string{"2 [{0 0}]", "5 [{0 20} {30 41}]"}, dump(t, d))
}

func TestDecodeErrors(t *testing.T) {
	m := NewMemTombstones()
	m.AddInterval(1, Interval{math.MinInt64, math.MaxInt64})
	good, err := Encode(m)
	require.NoError(t, err)
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x10
		_, err := Decode(b)
		if i == 4 {
			require.ErrorIs(t, err, ErrUnsupportedVersion, "version byte")
			continue
		}
		var ce *corrupt.Error
		require.ErrorAs(t, err, &ce, "byte %d flipped", i)
		require.ErrorIs(t, err, corrupt.ErrCorrupt, "byte %d flipped", i)
	}
	for n := range len(good) {
		_, err := Decode(good[:n])
		require.ErrorIs(t, err, corrupt.ErrCorrupt, "truncated to %d", n)
	}
	// A bad varint under a valid checksum.
	body := []byte{0x01, 0xff}
	b := append([]byte{0x01, 0x30, 0xBA, 0x30, 0x01}, body...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
	var ce *corrupt.Error
	_, err = Decode(b)
	require.ErrorAs(t, err, &ce, "bad varint")
	require.Equal(t, int64(6), ce.Offset, "bad varint: %v", err) // the mint
}

func TestFileRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	m := NewMemTombstones()
	for range 1000 {
		a := rng.Int64N(1e6) - 5e5
		m.AddInterval(rng.Uint64N(200), Interval{a, a + rng.Int64N(1000)})
	}
	fsys := vfs.NewMemFS()
	require.NoError(t, fsys.MkdirAll("block", 0o755))
	require.NoError(t, fsys.SyncDir("."))

	_, _, err := ReadFile(fsys, "block")
	require.ErrorIs(t, err, ErrMissing, "missing file")
	require.ErrorIs(t, err, fs.ErrNotExist, "missing file")

	size, err := WriteFile(fsys, "block", m)
	require.NoError(t, err)
	// Everything must survive a crash right after WriteFile.
	crashed := fsys.Crash()
	r, size2, err := ReadFile(crashed, "block")
	require.NoError(t, err)
	mustEqual(t, size, size2)
	mustEqual(t, dump(t, m), dump(t, r), "seed ", seed)
	mustEqual(t, m.Total(), r.Total())
	entries, err := crashed.ReadDir("block")
	require.NoError(t, err)
	mustEqual(t, 1, len(entries), "temporary file left behind")
}

// TestWriteFileErrors fails each operation of WriteFile in turn: the error
// must surface, no temporary file may stay, and an existing file must stay
// intact.
func TestWriteFileErrors(t *testing.T) {
	old := NewMemTombstones()
	old.AddInterval(1, Interval{1, 2})
	m := NewMemTombstones()
	m.AddInterval(2, Interval{3, 4})
	boom := errors.New("boom")
	for nth := 1; ; nth++ {
		fsys := vfs.NewMemFS()
		require.NoError(t, fsys.MkdirAll("b", 0o755))
		_, err := WriteFile(fsys, "b", old)
		require.NoError(t, err)
		count := 0
		fsys.SetHook(func(op vfs.Op, _ string) error {
			if op.Mutating() {
				count++
				if count == nth {
					return boom
				}
			}
			return nil
		})
		_, err = WriteFile(fsys, "b", m)
		fsys.SetHook(nil)
		if count < nth {
			require.NoError(t, err)
			break
		}
		require.ErrorIs(t, err, boom, "op %d", nth)
		r, _, err := ReadFile(fsys, "b")
		require.NoError(t, err)
		d := dump(t, r)
		require.True(t, fmt.Sprint(d) == fmt.Sprint(dump(t, old)) || fmt.Sprint(d) == fmt.Sprint(dump(t, m)), "op %d: file holds %v", nth, d)
		entries, err := fsys.ReadDir("b")
		require.NoError(t, err)
		require.Len(t, entries, 1, "op %d: entries left", nth)
	}
}

func FuzzRead(f *testing.F) {
	m := NewMemTombstones()
	m.AddInterval(1, Interval{0, 10}, Interval{20, 30})
	m.AddInterval(1<<40, Interval{math.MinInt64, math.MaxInt64})
	good, err := Encode(m)
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{0x01, 0x30, 0xBA, 0x30, 0x01, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(b []byte) {
			d, err := Decode(b)
			if err != nil {
				require.True(t, errors.Is(err, corrupt.ErrCorrupt) || errors.Is(err, ErrUnsupportedVersion), "unexpected error class: %v", err)
				return
			}
			// Whatever decodes re-encodes to something that decodes the same.
			enc, err := Encode(d)
			require.NoError(t, err)
			d2, err := Decode(enc)
			require.NoError(t, err)
			mustEqual(t, dump(t, d), dump(t, d2))
		}
		check(b)
		// Also with a valid checksum, to get past it.
		if len(b) >= headerLen+crcLen {
			fixed := slices.Clone(b)
			binary.BigEndian.PutUint32(fixed[len(fixed)-crcLen:], crc32.Checksum(fixed[headerLen:len(fixed)-crcLen], castagnoli))
			check(fixed)
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Every 24 bytes are a ref, a mint and a maxt.
		m := NewMemTombstones()
		for ; len(b) >= 24; b = b[24:] {
			ref := binary.LittleEndian.Uint64(b) % 64
			mint := int64(binary.LittleEndian.Uint64(b[8:]))
			maxt := int64(binary.LittleEndian.Uint64(b[16:]))
			m.AddInterval(ref, Interval{mint, maxt})
		}
		enc, err := Encode(m)
		require.NoError(t, err)
		d, err := Decode(enc)
		require.NoError(t, err)
		mustEqual(t, dump(t, m), dump(t, d))
		mustEqual(t, m.Total(), d.Total())
	})
}

func BenchmarkDecode(b *testing.B) {
	m := NewMemTombstones()
	for i := range uint64(10000) {
		m.AddInterval(i, Interval{int64(i), int64(i) + 100}, Interval{int64(i) + 1000, int64(i) + 2000})
	}
	enc, err := Encode(m)
	require.NoError(b, err)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
