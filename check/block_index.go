package check

import (
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/labels"
)

// seriesAlign is the alignment of series entries in an index file: a
// series reference is its entry's offset divided by it.
const seriesAlign = 16

// checkIndex checks the index file at path and, through it, the chunks of
// every series. It fills bc.series and bc.refs and reports whether the
// index could be opened (so that the other checks can compare with it).
func (bc *blockCheck) checkIndex(path string) bool {
	rp := bc.c.rp
	ix, err := index.NewFileReader(bc.c.fs, path)
	if err != nil {
		rp.fromErr(Error, path, -1, "", err, "index does not open")
		bc.damaged = true
		return false
	}
	defer ix.Close()

	bc.checkSymbols(ix, path)

	all, err := ix.AllPostings()
	if err != nil {
		rp.fromErr(Error, path, -1, "", err, "list of all series does not read")
		bc.damaged = true
		return true
	}
	var (
		builder = labels.NewScratchBuilder(16)
		metas   []index.ChunkMeta
		prev    labels.Labels
		prevRef uint64
	)
	for all.Next() {
		ref := all.At()
		if len(bc.series) > 0 && ref <= prevRef {
			rp.errorf(path, -1, "", nil, "list of all series is not strictly increasing: %d after %d", ref, prevRef)
			bc.damaged = true
			continue
		}
		prevRef = ref
		acc := seriesAcc{ref: ref}
		if err := ix.Series(ref, &builder, &metas); err != nil {
			rp.fromErr(Error, path, int64(ref*seriesAlign), "", err, "series %d does not decode", ref)
			bc.damaged = true
			acc.bad = true
			bc.series = append(bc.series, acc)
			continue
		}
		lset := builder.Labels()
		bc.checkLabels(path, ref, lset)
		if len(bc.series) > 0 && labels.Compare(prev, lset) >= 0 {
			rp.errorf(path, int64(ref*seriesAlign), lset.String(), nil, "series is not after the one before it, %s", prev)
			bc.damaged = true
		}
		prev = lset
		lset.Range(func(l labels.Label) {
			acc.want += bc.pairHash(l.Name, l.Value)
			acc.wantN++
		})
		bc.series = append(bc.series, acc)
		bc.sum.Series++
		bc.checkSeriesChunks(lset, metas)
	}
	if err := all.Err(); err != nil {
		rp.fromErr(Error, path, -1, "", err, "list of all series does not read")
		bc.damaged = true
	}
	bc.checkPostings(ix, path)
	return true
}

// checkSymbols checks that the symbol table is strictly increasing.
func (bc *blockCheck) checkSymbols(ix *index.Reader, path string) {
	it := ix.Symbols()
	prev, n := "", 0
	for it.Next() {
		s := it.At()
		if n > 0 && s <= prev {
			bc.c.rp.errorf(path, -1, "", nil, "symbol %d %q is not after %q", n, s, prev)
			bc.damaged = true
			return
		}
		prev = s
		n++
	}
	if err := it.Err(); err != nil {
		bc.c.rp.fromErr(Error, path, -1, "", err, "symbol table does not read")
		bc.damaged = true
	}
}

// checkLabels checks that a series' label names are non-empty and strictly
// increasing, as the index format requires.
func (bc *blockCheck) checkLabels(path string, ref uint64, lset labels.Labels) {
	if lset.IsEmpty() {
		bc.c.rp.errorf(path, int64(ref*seriesAlign), "{}", nil, "series %d has no labels", ref)
		bc.damaged = true
		return
	}
	prev, n, bad := "", 0, ""
	lset.Range(func(l labels.Label) {
		switch {
		case bad != "":
		case l.Name == "":
			bad = "has an empty label name"
		case n > 0 && l.Name <= prev:
			bad = "has label names out of order or repeated (" + l.Name + " after " + prev + ")"
		}
		prev = l.Name
		n++
	})
	if bad != "" {
		bc.c.rp.errorf(path, int64(ref*seriesAlign), lset.String(), nil, "series %d %s", ref, bad)
		bc.damaged = true
	}
}

// checkPostings reads the postings list of every label pair, checks that
// it is strictly increasing and names series of the index, and then that
// every series is in exactly the lists of its own label pairs.
func (bc *blockCheck) checkPostings(ix *index.Reader, path string) {
	rp := bc.c.rp
	names, err := ix.LabelNames()
	if err != nil {
		rp.fromErr(Error, path, -1, "", err, "label names do not read")
		bc.damaged = true
		return
	}
	for _, name := range names {
		values, err := ix.SortedLabelValues(name)
		if err != nil {
			rp.fromErr(Error, path, -1, "", err, "values of label %q do not read", name)
			bc.damaged = true
			continue
		}
		for _, v := range values {
			bc.checkPostingsList(ix, path, name, v)
		}
	}
	for _, s := range bc.series {
		if s.bad || (s.want == s.got && s.wantN == s.gotN) {
			continue
		}
		series := ""
		builder := labels.NewScratchBuilder(16)
		if ix.Series(s.ref, &builder, nil) == nil {
			series = builder.Labels().String()
		}
		rp.errorf(path, int64(s.ref*seriesAlign), series, nil,
			"series %d is not in exactly the postings lists of its labels (it has %d labels and is in %d lists)", s.ref, s.wantN, s.gotN)
		bc.damaged = true
	}
}

// checkPostingsList checks the postings list of name=value and credits
// the pair to every series in it.
func (bc *blockCheck) checkPostingsList(ix *index.Reader, path, name, value string) {
	rp := bc.c.rp
	p, err := ix.Postings(name, value)
	if err != nil {
		rp.fromErr(Error, path, -1, "", err, "postings list of %s=%q does not read", name, value)
		bc.damaged = true
		return
	}
	h := bc.pairHash(name, value)
	var prev uint64
	n, unknown := 0, 0
	for p.Next() {
		ref := p.At()
		if n > 0 && ref <= prev {
			rp.errorf(path, -1, "", nil, "postings list of %s=%q is not strictly increasing: %d after %d", name, value, ref, prev)
			bc.damaged = true
			return
		}
		prev = ref
		n++
		i, ok := bc.findSeries(ref)
		if !ok {
			if unknown++; unknown == 1 {
				rp.errorf(path, -1, "", nil, "postings list of %s=%q holds %d, which is not a series of the index", name, value, ref)
				bc.damaged = true
			}
			continue
		}
		bc.series[i].got += h
		bc.series[i].gotN++
	}
	if err := p.Err(); err != nil {
		rp.fromErr(Error, path, -1, "", err, "postings list of %s=%q does not read", name, value)
		bc.damaged = true
	}
}
