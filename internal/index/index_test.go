package index

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

const seriesFile = "../../testdata/20kseries.json"

var (
	load20kOnce sync.Once
	load20kSets []labels.Labels
	load20kErr  error
)

// load20k returns the label sets of testdata/20kseries.json, sorted and
// without duplicates. Callers must not modify the slice.
func load20k(t testing.TB) []labels.Labels {
	t.Helper()
	load20kOnce.Do(func() {
		f, err := os.Open(seriesFile)
		if err != nil {
			load20kErr = err
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]string
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				load20kErr = err
				return
			}
			load20kSets = append(load20kSets, labels.FromMap(m))
		}
		if err := sc.Err(); err != nil {
			load20kErr = err
			return
		}
		slices.SortFunc(load20kSets, labels.Compare)
		load20kSets = slices.CompactFunc(load20kSets, labels.Equal)
	})
	require.NoError(t, load20kErr)
	return load20kSets
}

func symbolsOf(sets []labels.Labels) []string {
	m := map[string]struct{}{}
	for _, ls := range sets {
		ls.Range(func(l labels.Label) {
			m[l.Name] = struct{}{}
			m[l.Value] = struct{}{}
		})
	}
	syms := make([]string, 0, len(m))
	for s := range m {
		syms = append(syms, s)
	}
	slices.Sort(syms)
	return syms
}

// testChunks returns a deterministic, valid chunk list for series i.
func testChunks(i int) []ChunkMeta {
	n := i % 4
	chks := make([]ChunkMeta, 0, n)
	t := int64(i*7) - 1000
	ref := uint64(i%3)<<32 | uint64(i*100)
	for j := range n {
		c := ChunkMeta{Ref: ref, MinTime: t, MaxTime: t + int64(j*13+i%5)}
		chks = append(chks, c)
		t = c.MaxTime + 1 + int64(j)
		ref += uint64(50 + j)
	}
	return chks
}

// writeIndex writes sets (sorted) with testChunks to path.
func writeIndex(t testing.TB, fsys vfs.FS, path string, sets []labels.Labels) {
	t.Helper()
	w, err := NewWriter(fsys, path)
	require.NoError(t, err)
	for _, s := range symbolsOf(sets) {
		require.NoError(t, w.AddSymbol(s))
	}
	for i, ls := range sets {
		require.NoError(t, w.AddSeries(uint64(i+1), ls, testChunks(i)...))
	}
	require.NoError(t, w.Close())
}

func openIndex(t testing.TB, sets []labels.Labels) *Reader {
	t.Helper()
	fsys := vfs.NewMemFS()
	writeIndex(t, fsys, "index", sets)
	r, err := NewFileReader(fsys, "index")
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestRoundTrip20k(t *testing.T) {
	sets := load20k(t)
	r := openIndex(t, sets)
	require.Equal(t, FormatV2, r.Version())

	// Symbols.
	var syms []string
	it := r.Symbols()
	for it.Next() {
		syms = append(syms, it.At())
	}
	require.NoError(t, it.Err())
	require.Equal(t, symbolsOf(sets), syms)
	require.Equal(t, len(syms), r.NumSymbols())
	for _, i := range []uint32{0, 1, 31, 32, 33, uint32(len(syms) - 1)} {
		s, err := r.LookupSymbol(i)
		require.NoError(t, err)
		require.Equal(t, syms[i], s)
	}
	_, err := r.LookupSymbol(uint32(len(syms)))
	require.True(t, errors.Is(err, ErrNotFound), "lookup past the end: %v", err)

	// Series, in order, via the all postings.
	all, err := r.AllPostings()
	require.NoError(t, err)
	refs := expand(t, all)
	require.Len(t, refs, len(sets))
	builder := labels.NewScratchBuilder(16)
	var chks []ChunkMeta
	for i, ref := range refs {
		require.NoError(t, r.Series(ref, &builder, &chks))
		require.True(t, labels.Equal(sets[i], builder.Labels()), "series %d: %s != %s", i, sets[i], builder.Labels())
		want := testChunks(i)
		require.True(t, slices.Equal(want, chks), "series %d chunks: want %v got %v", i, want, chks)
		require.NoError(t, r.Series(ref, &builder, nil))
		require.True(t, labels.Equal(sets[i], builder.Labels()))
	}

	// Label names, values and postings against a model.
	model := map[string]map[string][]uint64{}
	for i, ls := range sets {
		ls.Range(func(l labels.Label) {
			if model[l.Name] == nil {
				model[l.Name] = map[string][]uint64{}
			}
			model[l.Name][l.Value] = append(model[l.Name][l.Value], refs[i])
		})
	}
	names, err := r.LabelNames()
	require.NoError(t, err)
	wantNames := make([]string, 0, len(model))
	for n := range model {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	require.Equal(t, wantNames, names)
	for _, n := range names {
		vals, err := r.SortedLabelValues(n)
		require.NoError(t, err)
		wantVals := make([]string, 0, len(model[n]))
		for v := range model[n] {
			wantVals = append(wantVals, v)
		}
		slices.Sort(wantVals)
		require.Equal(t, wantVals, vals, "values of %s", n)
		for _, v := range vals {
			p, err := r.Postings(n, v)
			require.NoError(t, err)
			require.Equal(t, model[n][v], expand(t, p), "postings %s=%s", n, v)
		}
		// Several values at once, unsorted, with unknown ones mixed in.
		pick := []string{"\xff", vals[len(vals)-1], "", vals[0], vals[len(vals)/2], vals[len(vals)/2]}
		p, err := r.Postings(n, pick...)
		require.NoError(t, err)
		var want []uint64
		for _, v := range pick {
			want = append(want, model[n][v]...)
		}
		slices.Sort(want)
		require.Equal(t, slices.Compact(want), expand(t, p), "postings of %s for %q", n, pick)
	}
	vals, err := r.SortedLabelValues("no such name")
	require.NoError(t, err)
	require.Empty(t, vals)
	p, err := r.Postings("no such name", "x")
	require.NoError(t, err)
	require.Equal(t, []uint64(nil), expand(t, p))
	p, err = r.PostingsForLabelMatching("__name__", func(v string) bool { return v < "c" })
	require.NoError(t, err)
	var want []uint64
	for v, l := range model["__name__"] {
		if v < "c" {
			want = append(want, l...)
		}
	}
	slices.Sort(want)
	require.Equal(t, want, expand(t, p))
}

func TestSeriesBadReference(t *testing.T) {
	sets := []labels.Labels{
		labels.FromStrings("a", "1", "b", "1", "c", "1", "d", "1", "e", "1", "f", "1", "g", "1", "h", "1", "i", "1", "j", "1"),
		labels.FromStrings("a", "2"),
	}
	r := openIndex(t, sets)
	builder := labels.NewScratchBuilder(2)
	for _, ref := range []uint64{0, 1, 1 << 40, 1<<64 - 1} {
		err := r.Series(ref, &builder, nil)
		require.True(t, errors.Is(err, ErrNotFound), "ref %d: %v", ref, err)
	}
	// A reference inside the series section but not at an entry.
	all, err := r.AllPostings()
	require.NoError(t, err)
	refs := expand(t, all)
	err = r.Series(refs[0]+1, &builder, nil)
	require.True(t, err != nil, "misaligned reference accepted")
}

func TestPostingsForMatchersReaderAgainstModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	model := randSeries(rng, 300)
	r := openIndex(t, model.sets)
	all, err := r.AllPostings()
	require.NoError(t, err)
	model.refs = expand(t, all)
	checkMatchersAgainstModel(t, r, model, rng, seed, 3000)
}

// TestPostingsForMatchers20k compares the head's and a block's answers on
// the real label sets, for matchers built from their names and values.
func TestPostingsForMatchers20k(t *testing.T) {
	sets := load20k(t)
	r := openIndex(t, sets)
	all, err := r.AllPostings()
	require.NoError(t, err)
	refs := expand(t, all)
	mp := NewMemPostings()
	for i, ls := range sets {
		mp.Add(uint64(i), ls)
	}
	names, err := r.LabelNames()
	require.NoError(t, err)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	for round := range 100 {
		var ms []*labels.Matcher
		for range 1 + rng.IntN(3) {
			n := names[rng.IntN(len(names))]
			vals, err := r.SortedLabelValues(n)
			require.NoError(t, err)
			v := vals[rng.IntN(len(vals))]
			typ := labels.MatchType(rng.IntN(4))
			if typ >= labels.MatchRegexp {
				switch rng.IntN(3) {
				case 0:
					v = v + "|" + vals[rng.IntN(len(vals))]
				case 1:
					v = v[:len(v)/2] + ".*"
				default:
					v = ".*" + v[len(v)/2:]
				}
			}
			m, err := labels.NewMatcher(typ, n, v)
			require.NoError(t, err)
			ms = append(ms, m)
		}
		var want []uint64
		for i, ls := range sets {
			if labels.MatchLabels(ls, ms...) {
				want = append(want, refs[i])
			}
		}
		p, err := PostingsForMatchers(r, ms...)
		require.NoError(t, err)
		require.Equal(t, want, expand(t, p), "seed %d round %d %v", seed, round, ms)
		p, err = PostingsForMatchers(mp, ms...)
		require.NoError(t, err)
		got := expand(t, p)
		for i := range got {
			got[i] = refs[got[i]]
		}
		require.Equal(t, want, got, "head: seed %d round %d %v", seed, round, ms)
	}
}

func TestWriterErrors(t *testing.T) {
	a1 := labels.FromStrings("a", "1")
	a2 := labels.FromStrings("a", "2")
	cases := []struct {
		name string
		run  func(w *Writer) error
		want error
	}{
		{"symbol order", func(w *Writer) error {
			require.NoError(t, w.AddSymbol("b"))
			return w.AddSymbol("a")
		}, ErrOutOfOrder},
		{"duplicate symbol", func(w *Writer) error {
			require.NoError(t, w.AddSymbol("a"))
			return w.AddSymbol("a")
		}, ErrOutOfOrder},
		{"symbol after series", func(w *Writer) error {
			for _, s := range []string{"1", "a"} {
				require.NoError(t, w.AddSymbol(s))
			}
			require.NoError(t, w.AddSeries(1, a1))
			return w.AddSymbol("z")
		}, ErrOutOfOrder},
		{"unknown value", func(w *Writer) error {
			require.NoError(t, w.AddSymbol("a"))
			return w.AddSeries(1, a1)
		}, ErrUnknownSymbol},
		{"unknown name", func(w *Writer) error {
			require.NoError(t, w.AddSymbol("1"))
			return w.AddSeries(1, a1)
		}, ErrUnknownSymbol},
		{"series order", func(w *Writer) error {
			for _, s := range []string{"1", "2", "a"} {
				require.NoError(t, w.AddSymbol(s))
			}
			require.NoError(t, w.AddSeries(1, a2))
			return w.AddSeries(2, a1)
		}, ErrOutOfOrder},
		{"duplicate series", func(w *Writer) error {
			for _, s := range []string{"1", "a"} {
				require.NoError(t, w.AddSymbol(s))
			}
			require.NoError(t, w.AddSeries(1, a1))
			return w.AddSeries(2, a1)
		}, ErrOutOfOrder},
		{"ref order", func(w *Writer) error {
			for _, s := range []string{"1", "2", "a"} {
				require.NoError(t, w.AddSymbol(s))
			}
			require.NoError(t, w.AddSeries(5, a1))
			return w.AddSeries(5, a2)
		}, ErrOutOfOrder},
		{"empty label name", func(w *Writer) error {
			for _, s := range []string{"", "1"} {
				require.NoError(t, w.AddSymbol(s))
			}
			return w.AddSeries(1, labels.FromStrings("", "1"))
		}, ErrInvalidLabels},
		{"duplicate label name", func(w *Writer) error {
			for _, s := range []string{"1", "2", "a"} {
				require.NoError(t, w.AddSymbol(s))
			}
			return w.AddSeries(1, labels.New(labels.Label{Name: "a", Value: "1"}, labels.Label{Name: "a", Value: "2"}))
		}, ErrInvalidLabels},
		{"chunk maxt < mint", func(w *Writer) error {
			for _, s := range []string{"1", "a"} {
				require.NoError(t, w.AddSymbol(s))
			}
			return w.AddSeries(1, a1, ChunkMeta{MinTime: 5, MaxTime: 4})
		}, ErrInvalidChunk},
		{"chunks overlap", func(w *Writer) error {
			for _, s := range []string{"1", "a"} {
				require.NoError(t, w.AddSymbol(s))
			}
			return w.AddSeries(1, a1, ChunkMeta{MinTime: 0, MaxTime: 10}, ChunkMeta{MinTime: 10, MaxTime: 20})
		}, ErrInvalidChunk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := NewWriter(vfs.NewMemFS(), "index")
			require.NoError(t, err)
			err = c.run(w)
			require.True(t, errors.Is(err, c.want), "got %v, want %v", err, c.want)
			require.NoError(t, w.Close())
			require.True(t, errors.Is(w.Close(), ErrClosed))
			require.True(t, errors.Is(w.AddSymbol("zz"), ErrClosed))
		})
	}
}

// TestWriterIOErrors fails each write and sync in turn and checks that the
// error surfaces and the file is closed.
func TestWriterIOErrors(t *testing.T) {
	sets := load20k(t)[:500]
	boom := errors.New("boom")
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync} {
		for nth := 1; ; nth++ {
			fsys := vfs.NewMemFS()
			count := 0
			fsys.SetHook(func(o vfs.Op, _ string) error {
				if o == op {
					count++
					if count == nth {
						return boom
					}
				}
				return nil
			})
			err := func() error {
				w, err := NewWriter(fsys, "index")
				if err != nil {
					return err
				}
				for _, s := range symbolsOf(sets) {
					if err := w.AddSymbol(s); err != nil {
						_ = w.Close()
						return err
					}
				}
				for i, ls := range sets {
					if err := w.AddSeries(uint64(i+1), ls, testChunks(i)...); err != nil {
						_ = w.Close()
						return err
					}
				}
				return w.Close()
			}()
			if count < nth {
				require.NoError(t, err) // every op of this kind has been failed once
				break
			}
			require.True(t, errors.Is(err, boom), "%v #%d: got %v", op, nth, err)
		}
	}
}

// goldenSeries is the tiny index of TestGolden.
func goldenIndex(t testing.TB) []byte {
	t.Helper()
	fsys := vfs.NewMemFS()
	w, err := NewWriter(fsys, "index")
	require.NoError(t, err)
	for _, s := range []string{"1", "2", "a", "b"} {
		require.NoError(t, w.AddSymbol(s))
	}
	require.NoError(t, w.AddSeries(10, labels.FromStrings("a", "1"), ChunkMeta{Ref: 8, MinTime: 0, MaxTime: 100}))
	require.NoError(t, w.AddSeries(20, labels.FromStrings("a", "2", "b", "1")))
	require.NoError(t, w.Close())
	b, err := fsys.ReadFile("index")
	require.NoError(t, err)
	return b
}

// TestGolden checks a tiny index byte by byte against the layout worked out
// by hand from Prometheus's index.md. Checksums are computed over the byte
// ranges the document names.
func TestGolden(t *testing.T) {
	got := goldenIndex(t)
	var want []byte
	be32 := func(v uint32) { want = binary.BigEndian.AppendUint32(want, v) }
	be64 := func(v uint64) { want = binary.BigEndian.AppendUint64(want, v) }
	raw := func(b ...byte) { want = append(want, b...) }
	crcOf := func(from int) { be32(crc32.Checksum(want[from:], castagnoli)) }

	raw(0xBA, 0xAA, 0xD7, 0x00, 0x02) // magic, version 2
	// Symbol table at 5: len 12 = count (4) + 4 strings of 2 bytes.
	be32(12)
	be32(4)
	raw(1, '1', 1, '2', 1, 'a', 1, 'b')
	crcOf(9)
	require.Len(t, want, 25)
	raw(0, 0, 0, 0, 0, 0, 0) // pad to 32
	// Series 2 (offset 32): {a="1"}, one chunk [0,100] at ref 8.
	raw(7)                             // len
	raw(1, 2, 0)                       // 1 label: a(2) = 1(0)
	raw(1, 0x00, 100, 8)               // 1 chunk: mint varint 0, maxt-mint 100, ref 8
	crcOf(33)                          // over the 7 bytes
	raw(0, 0, 0, 0)                    // 44 -> pad to 48
	raw(6)                             // Series 3 (offset 48): {a="2", b="1"}, no chunks.
	raw(2, 2, 1, 3, 0)                 // 2 labels: a(2) = 2(1), b(3) = 1(0)
	raw(0)                             // 0 chunks
	crcOf(49)                          //
	raw(0)                             // 59 -> pad to 60
	postings := func(refs ...uint32) { // len, count, refs, crc
		be32(4 + 4*uint32(len(refs)))
		start := len(want)
		be32(uint32(len(refs)))
		for _, r := range refs {
			be32(r)
		}
		crcOf(start)
	}
	require.Len(t, want, 60)
	postings(2, 3) // ""="" at 60
	postings(2)    // a="1" at 80
	postings(3)    // a="2" at 96
	postings(3)    // b="1" at 112
	require.Len(t, want, 128)
	// Postings offset table at 128: 4 entries of (2, name, value, offset).
	be32(4 + 4 + 6 + 6 + 6)
	be32(4)
	raw(2, 0, 0, 60)
	raw(2, 1, 'a', 1, '1', 80)
	raw(2, 1, 'a', 1, '2', 96)
	raw(2, 1, 'b', 1, '1', 112)
	crcOf(132)
	require.Len(t, want, 162)
	// TOC: symbols, series, label indices, label offset table, postings,
	// postings offset table. Like Prometheus, the series entry points
	// at the end of the symbol table, before the alignment padding.
	for _, off := range []uint64{5, 25, 60, 128, 60, 128} {
		be64(off)
	}
	crcOf(162)
	require.Equal(t, want, got)

	r, err := NewReader(got)
	require.NoError(t, err)
	builder := labels.NewScratchBuilder(2)
	var chks []ChunkMeta
	require.NoError(t, r.Series(2, &builder, &chks))
	require.Equal(t, `{a="1"}`, builder.Labels().String())
	require.Equal(t, []ChunkMeta{{Ref: 8, MinTime: 0, MaxTime: 100}}, chks)
	require.NoError(t, r.Close())
	require.True(t, errors.Is(r.Series(2, &builder, nil), ErrClosed))
}

// TestReaderVersions checks which versions open.
func TestReaderVersions(t *testing.T) {
	for v, wantErr := range map[byte]error{1: ErrUnsupportedVersion, 2: nil, 3: nil, 4: ErrUnsupportedVersion} {
		b := slices.Clone(goldenIndex(t))
		b[4] = v
		r, err := NewReader(b)
		if wantErr != nil {
			require.True(t, errors.Is(err, wantErr), "version %d: %v", v, err)
			continue
		}
		require.NoError(t, err, "version %d", v)
		require.Equal(t, int(v), r.Version())
	}
}

// TestReaderCorruption flips every byte of the golden index in turn: the
// reader must either fail with a *corrupt.Error (or ErrUnsupportedVersion
// for the version byte) on open, or report corruption when the damaged part
// is read; it must never return wrong data silently for a byte covered by a
// checksum.
func TestReaderCorruption(t *testing.T) {
	good := goldenIndex(t)
	padding := map[int]bool{25: true, 26: true, 27: true, 28: true, 29: true, 30: true, 31: true, 44: true, 45: true, 46: true, 47: true, 59: true}
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x5a
		r, err := NewReader(b)
		if err != nil {
			var ce *corrupt.Error
			require.True(t, errors.As(err, &ce) && errors.Is(err, corrupt.ErrCorrupt) || errors.Is(err, ErrUnsupportedVersion), "byte %d: %v", i, err)
			continue
		}
		// Opened: the damage is in a lazily checked part or in padding.
		readErr := readEverything(r)
		if padding[i] {
			require.NoError(t, readErr, "padding byte %d", i)
			continue
		}
		require.True(t, errors.Is(readErr, corrupt.ErrCorrupt), "byte %d: damage not detected (%v)", i, readErr)
	}
	for n := range len(good) {
		_, err := NewReader(good[:n])
		require.True(t, errors.Is(err, corrupt.ErrCorrupt), "truncated to %d: %v", n, err)
	}
}

// readEverything reads every symbol, label value, postings list and series
// of r and returns the first error.
func readEverything(r *Reader) error {
	it := r.Symbols()
	for it.Next() {
		_ = it.At()
	}
	if err := it.Err(); err != nil {
		return err
	}
	names, err := r.LabelNames()
	if err != nil {
		return err
	}
	builder := labels.NewScratchBuilder(8)
	var chks []ChunkMeta
	var firstErr error
	seen := map[uint64]bool{}
	readList := func(p Postings) {
		for p.Next() {
			if seen[p.At()] {
				continue
			}
			seen[p.At()] = true
			if err := r.Series(p.At(), &builder, &chks); err != nil && firstErr == nil {
				firstErr = err
			}
			_ = builder.Labels()
		}
		if err := p.Err(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if p, err := r.AllPostings(); err != nil {
		return err
	} else {
		readList(p)
	}
	for _, n := range names {
		vals, err := r.SortedLabelValues(n)
		if err != nil {
			return err
		}
		for _, v := range vals {
			p, err := r.Postings(n, v)
			if err != nil {
				return err
			}
			readList(p)
		}
		if _, err := PostingsForMatchers(r, labels.MustNewMatcher(labels.MatchRegexp, n, ".+")); err != nil {
			return err
		}
	}
	return firstErr
}

func TestNewFileReaderErrors(t *testing.T) {
	fsys := vfs.NewMemFS()
	_, err := NewFileReader(fsys, "missing")
	require.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
	require.NoError(t, fsys.WriteFile("junk", []byte("not an index at all, no no no, not at all, not even close to one"), 0o644))
	_, err = NewFileReader(fsys, "junk")
	var ce *corrupt.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, "junk", ce.File)
	require.Equal(t, int64(0), ce.Offset)
}

func TestEmptyIndex(t *testing.T) {
	r := openIndex(t, nil)
	names, err := r.LabelNames()
	require.NoError(t, err)
	require.Empty(t, names)
	p, err := r.AllPostings()
	require.NoError(t, err)
	require.Equal(t, []uint64(nil), expand(t, p))
	p, err = PostingsForMatchers(r, labels.MustNewMatcher(labels.MatchEqual, "a", ""))
	require.NoError(t, err)
	require.Equal(t, []uint64(nil), expand(t, p))
}

func BenchmarkReader(b *testing.B) {
	sets := load20k(b)
	r := openIndex(b, sets)
	all, err := r.AllPostings()
	require.NoError(b, err)
	refs := expand(b, all)
	names, err := r.LabelNames()
	require.NoError(b, err)
	type pair struct{ n, v string }
	var pairs []pair
	for _, n := range names {
		vals, err := r.SortedLabelValues(n)
		require.NoError(b, err)
		for _, v := range vals {
			pairs = append(pairs, pair{n, v})
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return i%7 < j%7 }) // spread lookups
	b.Run("Postings", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			pr := pairs[i%len(pairs)]
			i++
			p, err := r.Postings(pr.n, pr.v)
			if err != nil || !p.Next() {
				b.Fatal(pr, err)
			}
		}
	})
	b.Run("Series", func(b *testing.B) {
		b.ReportAllocs()
		builder := labels.NewScratchBuilder(16)
		var chks []ChunkMeta
		i := 0
		for b.Loop() {
			if err := r.Series(refs[i%len(refs)], &builder, &chks); err != nil {
				b.Fatal(err)
			}
			i += 7
		}
	})
	b.Run("SeriesLabels", func(b *testing.B) {
		b.ReportAllocs()
		builder := labels.NewScratchBuilder(16)
		i := 0
		for b.Loop() {
			if err := r.Series(refs[i%len(refs)], &builder, nil); err != nil {
				b.Fatal(err)
			}
			_ = builder.Labels()
			i += 7
		}
	})
	b.Run("Open", func(b *testing.B) {
		fsys := vfs.NewMemFS()
		writeIndex(b, fsys, "index", sets)
		data, err := fsys.ReadFile("index")
		require.NoError(b, err)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := NewReader(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkWriter20k(b *testing.B) {
	sets := load20k(b)
	syms := symbolsOf(sets)
	b.ReportAllocs()
	for b.Loop() {
		fsys := vfs.NewMemFS()
		w, err := NewWriter(fsys, "index")
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range syms {
			if err := w.AddSymbol(s); err != nil {
				b.Fatal(err)
			}
		}
		for i, ls := range sets {
			if err := w.AddSeries(uint64(i+1), ls, testChunks(i)...); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(sets)), "series/op")
}

func BenchmarkPostingsForMatchers20k(b *testing.B) {
	sets := load20k(b)
	r := openIndex(b, sets)
	mp := NewMemPostings()
	for i, ls := range sets {
		mp.Add(uint64(i), ls)
	}
	// Pick a frequent name and value for realistic selectors.
	names, err := r.LabelNames()
	require.NoError(b, err)
	var bigName string
	var bigVals []string
	for _, n := range names {
		if n == labels.MetricName {
			continue
		}
		vals, err := r.SortedLabelValues(n)
		require.NoError(b, err)
		if len(vals) > len(bigVals) {
			bigName, bigVals = n, vals
		}
	}
	metric, err := r.SortedLabelValues(labels.MetricName)
	require.NoError(b, err)
	mk := labels.MustNewMatcher
	cases := []struct {
		name string
		ms   []*labels.Matcher
	}{
		{"eq", []*labels.Matcher{mk(labels.MatchEqual, labels.MetricName, metric[len(metric)/2])}},
		{"eq_neq", []*labels.Matcher{mk(labels.MatchEqual, labels.MetricName, metric[len(metric)/2]), mk(labels.MatchNotEqual, bigName, bigVals[0])}},
		{"re_set", []*labels.Matcher{mk(labels.MatchRegexp, labels.MetricName, metric[1]+"|"+metric[2]+"|"+metric[3])}},
		{"re_prefix", []*labels.Matcher{mk(labels.MatchRegexp, bigName, bigVals[0][:1]+".*")}},
		{"not_re_only", []*labels.Matcher{mk(labels.MatchNotRegexp, bigName, bigVals[0][:1]+".*")}},
		{"label_unset", []*labels.Matcher{mk(labels.MatchEqual, bigName, "")}},
	}
	for _, src := range []struct {
		name string
		ix   PostingsReader
	}{{"head", mp}, {"block", r}} {
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/%s", src.name, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p, err := PostingsForMatchers(src.ix, c.ms...)
					if err != nil {
						b.Fatal(err)
					}
					for p.Next() {
					}
					if p.Err() != nil {
						b.Fatal(p.Err())
					}
				}
			})
		}
	}
}

func TestReaderForEachValue(t *testing.T) {
	r := openIndex(t, []labels.Labels{
		labels.FromStrings("a", "1"),
		labels.FromStrings("a", "1", "b", "x"),
		labels.FromStrings("a", "2"),
	})
	type entry struct {
		value string
		n     int
	}
	var got []entry
	require.NoError(t, r.ForEachValue("a", func(v string, p Postings) error {
		refs, err := ExpandPostings(p)
		got = append(got, entry{v, len(refs)})
		return err
	}))
	require.Equal(t, []entry{{"1", 2}, {"2", 1}}, got)

	stop := errors.New("stop")
	calls := 0
	err := r.ForEachValue("a", func(string, Postings) error { calls++; return stop })
	require.True(t, errors.Is(err, stop) && calls == 1, "stops at f's error: %v after %d calls", err, calls)
	require.NoError(t, r.ForEachValue("nope", func(string, Postings) error { return stop }))
	require.NoError(t, r.ForEachValue("", func(string, Postings) error { return stop }))
}
