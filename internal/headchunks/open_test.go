package headchunks

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// repairOpts makes genRecs(…, 30, 40) span several files.
var repairOpts = Options{MaxFileSize: 1500}

// damaged is what a repair case expects: the damage reported (file "" for
// none) and how many of the records written survive.
type damaged struct {
	file string
	off  int64
	keep int
}

// diskOf returns the files and sizes that recs leave: each file ends after
// its last record.
func diskOf(recs []rec) map[string]int64 {
	out := map[string]int64{}
	for _, rc := range recs {
		seq, off := SplitRef(rc.ref)
		out[FileName(int(seq))] = int64(off) + recordSize(len(rc.data))
	}
	return out
}

// lastOf returns the sequence number of the last file recs use and the
// index of the first record in it.
func lastOf(recs []rec) (seq uint32, first int) {
	seq, _ = SplitRef(recs[len(recs)-1].ref)
	first = len(recs) - 1
	for first > 0 {
		if s, _ := SplitRef(recs[first-1].ref); s != seq {
			break
		}
		first--
	}
	return seq, first
}

// firstIn returns the index of the first record in file seq.
func firstIn(recs []rec, seq uint32) int {
	for i, rc := range recs {
		if s, _ := SplitRef(rc.ref); s == seq {
			return i
		}
	}
	panic("no record in file")
}

func mustRead(t *testing.T, fsys *vfs.MemFS, seq int) []byte {
	t.Helper()
	b, err := fsys.ReadFile(fileName(seq))
	require.NoError(t, err)
	return b
}

func mustWrite(t *testing.T, fsys *vfs.MemFS, seq int, b []byte) {
	t.Helper()
	require.NoError(t, fsys.WriteFile(fileName(seq), b, 0o644))
}

// rawRecord returns a record's bytes with a valid checksum.
func rawRecord(series uint64, mint, maxt int64, enc byte, data []byte) []byte {
	return appendRecord(nil, series, mint, maxt, enc, data)
}

func TestRepair(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged
	}{
		{"bad CRC in the middle file", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			i := firstIn(recs, 2) + 1
			seq, off := SplitRef(recs[i].ref)
			b := mustRead(t, fsys, int(seq))
			b[int64(off)+recordSize(len(recs[i].data))-1] ^= 1
			mustWrite(t, fsys, int(seq), b)
			return damaged{fileName(2), int64(off), i}
		}},
		{"bad data byte in the first file", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			_, off := SplitRef(recs[2].ref)
			b := mustRead(t, fsys, 1)
			b[off+30] ^= 0x40
			mustWrite(t, fsys, 1, b)
			return damaged{fileName(1), int64(off), 2}
		}},
		{"bad magic in the middle file", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			b := mustRead(t, fsys, 2)
			b[0] = 0xFF
			mustWrite(t, fsys, 2, b)
			return damaged{fileName(2), 0, firstIn(recs, 2)}
		}},
		{"bad version", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			b := mustRead(t, fsys, 2)
			b[4] = 2
			mustWrite(t, fsys, 2, b)
			return damaged{fileName(2), 4, firstIn(recs, 2)}
		}},
		{"bad padding", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			b := mustRead(t, fsys, 1)
			b[7] = 1
			mustWrite(t, fsys, 1, b)
			return damaged{fileName(1), 5, 0}
		}},
		{"empty last file", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			seq, _ := lastOf(recs)
			mustWrite(t, fsys, int(seq)+1, nil)
			return damaged{fileName(int(seq) + 1), 0, len(recs)}
		}},
		{"header-only last file is fine", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			seq, _ := lastOf(recs)
			mustWrite(t, fsys, int(seq)+1, appendHeader(nil))
			return damaged{keep: len(recs)}
		}},
		{"zero tails", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			seq, _ := lastOf(recs)
			mustWrite(t, fsys, 1, append(mustRead(t, fsys, 1), make([]byte, 3)...))
			mustWrite(t, fsys, int(seq), append(mustRead(t, fsys, int(seq)), make([]byte, 4096)...))
			return damaged{keep: len(recs)}
		}},
		{"zero record header before data", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			_, off := SplitRef(recs[1].ref)
			b := mustRead(t, fsys, 1)
			clear(b[off : off+metaSize-1])
			mustWrite(t, fsys, 1, b)
			return damaged{fileName(1), int64(off), 1}
		}},
		{"sequence gap", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			seq, first := lastOf(recs)
			require.NoError(t, fsys.Rename(fileName(int(seq)), fileName(int(seq)+1)))
			return damaged{fileName(int(seq) + 1), -1, first}
		}},
		{"repeated sequence number", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			seq, first := lastOf(recs)
			// "7" is file 7 too, as Prometheus reads names; it sorts after
			// "000007" and is removed.
			name := testDir + "/" + strconv.Itoa(int(seq))
			require.NoError(t, fsys.WriteFile(name, mustRead(t, fsys, int(seq)), 0o644))
			_ = first
			return damaged{name, -1, len(recs)}
		}},
		{"unknown encoding", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			seq, _ := lastOf(recs)
			b := mustRead(t, fsys, int(seq))
			mustWrite(t, fsys, int(seq), append(b, rawRecord(1, 1, 2, 99, make([]byte, 20))...))
			return damaged{fileName(int(seq)), int64(len(b)), len(recs)}
		}},
		{"mint after maxt", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			seq, _ := lastOf(recs)
			b := mustRead(t, fsys, int(seq))
			mustWrite(t, fsys, int(seq), append(b, rawRecord(1, 3, 2, byte(recs[0].enc), recs[0].data)...))
			return damaged{fileName(int(seq)), int64(len(b)), len(recs)}
		}},
		{"undecodable chunk", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			seq, _ := lastOf(recs)
			b := mustRead(t, fsys, int(seq))
			mustWrite(t, fsys, int(seq), append(b, rawRecord(1, 1, 2, byte(chunks.EncHistogram), []byte{0, 1, 0xFF, 0xFF, 0xFF})...))
			return damaged{fileName(int(seq)), int64(len(b)), len(recs)}
		}},
		{"short last record", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			// Valid, but Prometheus rejects a file that ends in a record
			// shorter than minTailSize.
			seq, _ := lastOf(recs)
			b := mustRead(t, fsys, int(seq))
			mustWrite(t, fsys, int(seq), append(b, rawRecord(1, 1, 2, byte(chunks.EncXOR), []byte{0, 0})...))
			return damaged{fileName(int(seq)), int64(len(b)), len(recs)}
		}},
		{"file number out of range", func(t *testing.T, fsys *vfs.MemFS, recs []rec) damaged {
			require.NoError(t, fsys.WriteFile(testDir+"/99999999999", appendHeader(nil), 0o644))
			return damaged{testDir + "/99999999999", -1, len(recs)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := genRecs(t, rand.New(rand.NewPCG(11, 11)), 30, 40)
			fsys := vfs.NewMemFS()
			writeRecs(t, fsys, repairOpts, recs)
			seq, _ := lastOf(recs)
			require.GreaterOrEqual(t, seq, uint32(3))
			want := tc.damage(t, fsys, recs)
			checkRepair(t, fsys, recs, want)
		})
	}
}

// checkRepair opens fsys and checks the damage reported, the records
// loaded, the files left, and that a second Open is clean.
func checkRepair(t *testing.T, fsys *vfs.MemFS, recs []rec, want damaged) {
	t.Helper()
	// Verify finds what Open will, and writes nothing.
	before := contentsOf(t, fsys)
	vres, err := Verify(fsys, testDir)
	require.NoError(t, err)
	require.Equal(t, before, contentsOf(t, fsys), "Verify wrote")
	_, res, got := openAll(t, fsys, repairOpts)
	require.Equal(t, res, vres, "Verify and Open disagree")
	if want.file == "" {
		require.Nil(t, res.Repaired)
	} else {
		requireDamage(t, res.Repaired, want.file, want.off)
	}
	requireRecs(t, recs[:want.keep], got)
	disk := diskOf(recs[:want.keep])
	files := filesIn(t, fsys)
	if want.file == "" {
		for name, size := range files {
			// A header-only file (or one whose zero tail starts right
			// after its header) is valid and kept.
			if _, ok := disk[name]; !ok && size >= HeaderSize && allZero(mustReadName(t, fsys, name)[HeaderSize:]) {
				disk[name] = HeaderSize
			}
			// Without damage nothing is written: a zero tail stays.
			if d, ok := disk[name]; ok && size > d {
				require.True(t, allZero(mustReadName(t, fsys, name)[d:]), "%s: bytes after the data are not a zero tail", name)
				files[name] = d
			}
		}
	}
	require.Equal(t, disk, files)
	var bytes int64
	for _, n := range disk {
		bytes += n
	}
	require.Equal(t, LoadResult{Chunks: want.keep, Files: len(disk), Bytes: bytes, Repaired: res.Repaired}, res)
	reopenClean(t, fsys, repairOpts, recs[:want.keep])
}

// contentsOf returns every file of the test directory by name.
func contentsOf(t *testing.T, fsys *vfs.MemFS) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name := range filesIn(t, fsys) {
		out[name] = string(mustReadName(t, fsys, name))
	}
	return out
}

// TestVerifyMissingDir checks that a directory without chunks_head/ holds
// nothing to verify, and is not created.
func TestVerifyMissingDir(t *testing.T) {
	fsys := vfs.NewMemFS()
	res, err := Verify(fsys, testDir)
	require.NoError(t, err)
	require.Equal(t, LoadResult{}, res)
	_, err = fsys.Stat(testDir)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestRepairTornLastRecord cuts the last file at every byte of its last
// record, as a crash during its write may.
func TestRepairTornLastRecord(t *testing.T) {
	recs := genRecs(t, rand.New(rand.NewPCG(12, 12)), 10, 40)
	orig := vfs.NewMemFS()
	writeRecs(t, orig, repairOpts, recs)
	seq, _ := SplitRef(recs[len(recs)-1].ref)
	b := mustRead(t, orig, int(seq))
	last := recs[len(recs)-1]
	_, start := SplitRef(last.ref)
	for cut := int(start); cut < len(b); cut++ {
		fsys := orig.Crash() // a copy
		mustWrite(t, fsys, int(seq), b[:cut])
		want := damaged{keep: len(recs) - 1}
		if !allZero(b[start:cut]) { // a cut inside the leading zero bytes of the series ref is a zero tail
			want.file, want.off = fileName(int(seq)), int64(start)
		}
		if start == HeaderSize && want.file != "" {
			want.off = int64(start)
		}
		checkRepair(t, fsys, recs, want)
	}
}

// TestRepairOutOfOrderRecords checks that out-of-order records are
// counted, skipped, and kept.
func TestRepairOutOfOrderRecords(t *testing.T) {
	recs := genRecs(t, rand.New(rand.NewPCG(13, 13)), 5, 40)
	fsys := vfs.NewMemFS()
	writeRecs(t, fsys, Options{}, recs)
	b := mustRead(t, fsys, 1)
	ooo := rawRecord(3, 10, 20, byte(recs[0].enc)|OutOfOrderFlag, recs[0].data)
	b = append(b, ooo...)
	mustWrite(t, fsys, 1, b)
	_, res, got := openAll(t, fsys, Options{})
	require.Nil(t, res.Repaired)
	require.Equal(t, 1, res.OutOfOrder)
	require.Equal(t, int64(len(b)), res.Bytes)
	requireRecs(t, recs, got)
}

func TestOpenFnError(t *testing.T) {
	recs := genRecs(t, rand.New(rand.NewPCG(14, 14)), 30, 40)
	fsys := vfs.NewMemFS()
	writeRecs(t, fsys, repairOpts, recs)
	before := filesIn(t, fsys)
	errStop := errors.New("stop")
	n := 0
	_, _, err := Open(fsys, testDir, repairOpts, func(uint64, int64, int64, chunks.Chunk) error {
		n++
		if n == 10 {
			return errStop
		}
		return nil
	})
	require.ErrorIs(t, err, errStop)
	require.False(t, errors.Is(err, corrupt.ErrCorrupt))
	require.Equal(t, before, filesIn(t, fsys))
}

func TestOpenOptions(t *testing.T) {
	for _, size := range []int64{-1, HeaderSize, MaxFileSizeLimit + 1} {
		_, _, err := Open(vfs.NewMemFS(), testDir, Options{MaxFileSize: size}, nil)
		require.ErrorIs(t, err, ErrInvalidOption)
	}
}

// TestCrash crashes the file system at every mutating operation of a
// workload of Adds, Flushes, Syncs and a Truncate: Open must succeed and
// load a run of the records written (the truncated ones may be gone),
// including every record synced before the crash.
func TestCrash(t *testing.T) {
	recs := genRecs(t, rand.New(rand.NewPCG(15, 15)), 40, 40)
	// workload runs against fsys and returns how many records were synced
	// when each mutating operation started (by operation count).
	workload := func(fsys *vfs.MemFS) {
		w, _, err := Open(fsys, testDir, repairOpts, nil)
		if err != nil {
			return
		}
		defer w.Close()
		for i := 0; i < len(recs); i += 5 {
			for j := i; j < i+5; j++ {
				if _, err := w.Add(recs[j].series, recs[j].mint, recs[j].maxt, chunkOf(t, recs[j])); err != nil {
					return
				}
			}
			if w.Flush() != nil {
				return
			}
			if i%10 == 5 && w.Sync() != nil {
				return
			}
			if i == 20 {
				if _, err := w.Truncate(recs[2].maxt + 1); err != nil {
					return
				}
			}
		}
	}
	probe := vfs.NewMemFS()
	writeRecs(t, vfs.NewMemFS(), repairOpts, recs) // sets the refs
	start := probe.Ops()
	workload(probe)
	ops := probe.Ops() - start
	require.Greater(t, ops, 20)

	for k := 0; k <= ops; k++ {
		// A crash after k operations, keeping what was durable.
		fsys := vfs.NewMemFS()
		fsys.CrashAfter(k)
		workload(fsys)
		checkCrashed(t, recs, fsys.CrashState(), k)

		// The same with torn writes: operations fail from the k-th on (the
		// process dies), then unsynced tails survive in part.
		fsys = vfs.NewMemFS()
		n := 0
		fsys.SetHook(func(vfs.Op, string) error {
			if n++; n > k {
				return errInjected
			}
			return nil
		})
		workload(fsys)
		fsys.SetHook(nil)
		checkCrashed(t, recs, fsys.CrashKeep(rand.New(rand.NewPCG(uint64(k), 1))), k)
	}
}

// checkCrashed opens a crashed file system twice: the first Open must
// load a run of recs, the second must find nothing to repair and load the
// same.
func checkCrashed(t *testing.T, recs []rec, crashed *vfs.MemFS, k int) {
	t.Helper()
	_, res, got := openAll(t, crashed, repairOpts)
	requireRun(t, recs, got, k)
	_, res2, got2 := openAll(t, crashed, repairOpts)
	require.Nil(t, res2.Repaired, "crash at op %d, first repair %v", k, res.Repaired)
	require.Len(t, got2, len(got))
}

// TestCrashKeepsSynced checks that a crash loses nothing synced, and
// nothing but what was not.
func TestCrashKeepsSynced(t *testing.T) {
	recs := genRecs(t, rand.New(rand.NewPCG(16, 16)), 40, 40)
	fsys := vfs.NewMemFS()
	w, _, err := Open(fsys, testDir, repairOpts, nil)
	require.NoError(t, err)
	addAll(t, w, recs[:25])
	require.NoError(t, w.Sync())
	addAll(t, w, recs[25:])
	require.NoError(t, w.Flush())
	_, res, got := openAll(t, fsys.Crash(), repairOpts)
	require.Nil(t, res.Repaired)
	requireRecs(t, recs[:25], got)
	require.NoError(t, w.Close())
}

// requireRun checks that got is a contiguous run of recs starting at the
// first record or after a truncated prefix, and ending anywhere.
func requireRun(t *testing.T, recs []rec, got []loaded, k int) {
	t.Helper()
	if len(got) == 0 {
		return
	}
	first := -1
	for i, rc := range recs {
		if rc.ref == Ref(0, 0) {
			continue
		}
		if rc.series == got[0].series && rc.mint == got[0].mint && string(rc.data) == string(got[0].data) {
			first = i
			break
		}
	}
	require.GreaterOrEqual(t, first, 0, "crash at op %d: first record loaded is not one written", k)
	require.LessOrEqual(t, first+len(got), len(recs), "crash at op %d", k)
	requireRecs(t, recs[first:first+len(got)], got)
}
