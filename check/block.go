package check

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/internal/tombstones"
)

// blockCheck is the state of the check of one block.
type blockCheck struct {
	c   *checker
	dir string
	sum BlockSummary
	// mint and maxt bound the block's samples: [mint, maxt). Without a
	// trustworthy meta.json they are the widest range, so that no sample
	// is reported for lying outside an unknown range.
	mint, maxt int64

	sr        *chunkseg.SegmentReader // nil if the chunk files do not open
	chunksDir string
	segFiles  []string // names of the chunk segment files, in name order

	// series holds every series of the index in reference order, with the
	// label pairs it has and those the postings lists give it.
	series []seriesAcc
	// refs are the chunk references of all series, in index order.
	refs []uint64
	// damaged is set by any problem that makes counts unreliable, so that
	// the stats of meta.json are only compared with a clean read.
	damaged bool

	it     chunks.Iterator // reused across chunks
	h      *histogram.Histogram
	fh     *histogram.FloatHistogram
	digest *xxhash.Digest
}

// seriesAcc compares a series' labels with the postings lists that hold
// it. Each label pair is hashed; want sums the hashes of the series' own
// pairs and got those of the lists the series was found in (wrapping
// addition, so order does not matter). They match when the series is in
// exactly the lists of its labels.
type seriesAcc struct {
	ref         uint64
	want, got   uint64
	wantN, gotN uint32
	// bad marks a series entry that could not be read: its postings are
	// not compared.
	bad bool
}

// checkBlock checks the block in bdir, whose directory name is name.
func (c *checker) checkBlock(bdir, name string) BlockSummary {
	bc := &blockCheck{c: c, dir: bdir, sum: BlockSummary{Dir: bdir},
		mint: math.MinInt64, maxt: math.MaxInt64,
		chunksDir: filepath.Join(bdir, chunksDirname), digest: xxhash.New()}
	meta, parsed, rangeOK := c.checkMeta(bdir, name)
	if rangeOK {
		bc.mint, bc.maxt = meta.MinTime, meta.MaxTime
		bc.sum.MinTime, bc.sum.MaxTime = meta.MinTime, meta.MaxTime
	}
	if !parsed {
		bc.damaged = true
	}

	bc.listChunkFiles()
	if sr, err := chunkseg.NewSegmentReader(c.fs, bc.chunksDir); err != nil {
		c.rp.fromErr(Error, bc.chunksDir, -1, "", err, "chunk files do not open")
		bc.damaged = true
	} else {
		bc.sr = sr
		defer sr.Close()
	}
	indexOK := bc.checkIndex(filepath.Join(bdir, indexFilename))
	bc.scanChunkFiles(indexOK)
	var metaTombs uint64
	if parsed {
		metaTombs = meta.Stats.NumTombstones
	}
	bc.checkTombstones(indexOK, metaTombs)

	if parsed && !bc.damaged {
		bc.compareStats(meta)
	}
	return bc.sum
}

// compareStats compares the stats of meta.json with what the block holds.
// Writers (ours and Prometheus's) count exactly what they write.
func (bc *blockCheck) compareStats(m blockMeta) {
	path := filepath.Join(bc.dir, metaFilename)
	st := m.Stats
	for _, f := range []struct {
		what      string
		meta, got uint64
	}{
		{"series", st.NumSeries, bc.sum.Series},
		{"chunks", st.NumChunks, bc.sum.Chunks},
		{"samples", st.NumSamples, bc.sum.Samples},
	} {
		if f.meta != f.got {
			bc.c.rp.errorf(path, -1, "", nil, "stats say %d %s, the block holds %d", f.meta, f.what, f.got)
		}
	}
	// The split by encoding is omitted (both zero) by writers older than
	// native histograms, and by ours and Prometheus's for an empty block.
	if st.NumFloatSamples != 0 || st.NumHistogramSamples != 0 {
		for _, f := range []struct {
			what      string
			meta, got uint64
		}{
			{"float samples", st.NumFloatSamples, bc.sum.Samples - bc.sum.HistogramSamples},
			{"histogram samples", st.NumHistogramSamples, bc.sum.HistogramSamples},
		} {
			if f.meta != f.got {
				bc.c.rp.errorf(path, -1, "", nil, "stats say %d %s, the block holds %d", f.meta, f.what, f.got)
			}
		}
	}
	if st.NumTombstones != bc.sum.Tombstones {
		bc.c.rp.warnf(path, -1, "", nil, "stats say %d tombstones, the tombstones file holds %d", st.NumTombstones, bc.sum.Tombstones)
	}
}

// checkTombstones checks that the tombstones file decodes and names series
// of the index (if the index could be read). A missing file is an error
// when meta.json counts tombstones (metaTombs > 0: the deletions are lost,
// and the DB refuses the block), and means no tombstones otherwise.
func (bc *blockCheck) checkTombstones(indexOK bool, metaTombs uint64) {
	path := filepath.Join(bc.dir, tombstones.Filename)
	tr, _, err := tombstones.ReadFile(bc.c.fs, bc.dir)
	if errors.Is(err, tombstones.ErrMissing) {
		if metaTombs > 0 {
			bc.c.rp.errorf(path, -1, "", err, "the tombstones file is missing but meta.json counts %d tombstones: "+
				"the block's deleted samples would come back (the DB refuses to open the block)", metaTombs)
			bc.damaged = true
		}
		return
	}
	if err != nil {
		bc.c.rp.fromErr(Error, path, -1, "", err, "tombstones do not decode")
		bc.damaged = true
		return
	}
	defer tr.Close()
	bc.sum.Tombstones = tr.Total()
	if !indexOK {
		return
	}
	unknown, first := 0, uint64(0)
	_ = tr.Iter(func(ref uint64, _ tombstones.Intervals) error {
		if _, ok := bc.findSeries(ref); !ok {
			if unknown == 0 {
				first = ref
			}
			unknown++
		}
		return nil
	})
	if unknown > 0 {
		bc.c.rp.warnf(path, -1, "", nil, "intervals for %d series references that are not in the index (first: %d)", unknown, first)
	}
}

// findSeries returns the position of the series ref in bc.series.
func (bc *blockCheck) findSeries(ref uint64) (int, bool) {
	return slices.BinarySearchFunc(bc.series, ref, func(s seriesAcc, ref uint64) int {
		switch {
		case s.ref < ref:
			return -1
		case s.ref > ref:
			return 1
		}
		return 0
	})
}

// pairHash hashes one label pair for seriesAcc.
func (bc *blockCheck) pairHash(name, value string) uint64 {
	d := bc.digest
	d.Reset()
	_, _ = d.WriteString(name)
	_, _ = d.Write([]byte{0xff})
	_, _ = d.WriteString(value)
	return d.Sum64()
}

// listChunkFiles lists the segment files of the chunks directory the way
// chunkseg.SegmentReader does: every name made only of digits, in name order
// (ReadDir sorts), the first being segment 0 of a chunk reference.
func (bc *blockCheck) listChunkFiles() {
	ents, err := bc.c.fs.ReadDir(bc.chunksDir)
	if err != nil {
		// NewSegmentReader reports it.
		return
	}
	for _, e := range ents {
		if isDigits(e.Name()) && !e.IsDir() {
			bc.segFiles = append(bc.segFiles, e.Name())
		}
	}
}

// chunkFile returns the path of the segment file a chunk reference names,
// and the offset in it.
func (bc *blockCheck) chunkFile(ref uint64) (string, int64) {
	seg, off := chunkseg.SplitBlockRef(ref)
	if int(seg) < len(bc.segFiles) {
		return filepath.Join(bc.chunksDir, bc.segFiles[seg]), int64(off)
	}
	return filepath.Join(bc.chunksDir, "segment "+strconv.FormatUint(uint64(seg), 10)), int64(off)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
