package tsdb

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// Label queries count only the series with a sample in the querier's time
// range that its snapshot sees and no deletion hides.
// A series an Appender created (it is in the postings from its first
// Append) but never committed has no samples; one whose first commit is in
// flight, or was not complete when the snapshot was taken, has none the
// snapshot sees. Neither is listed.
//
// Without matchers the work is per label value (or name), not per series:
// the candidates come from the postings (the head keeps them sorted between
// changes, see index.MemPostings.SortedLabelValuesWithPostings), and each
// value's list is walked only until the first series that qualifies, which
// is nearly always its first one: a quick check under the series lock,
// rarely the capture Select uses. Blocks inside the range without deletions
// are listed from their index. With matchers every matching series is
// checked, but without Select's sorting and chunk captures.
//
// Which samples a snapshot sees is decided in isolation.go only (the probes
// call newestVisible, allVisible and, through capture, invisibleSamples).

// errStopWalk ends a ForEachValue walk early; it never leaves this file.
var errStopWalk = errors.New("tsdb: stop walk")

// seriesProbe decides whether a read sees a sample of a series: a head
// series (headProbe) or a block series (blockProbe). A probe belongs to one
// label query and is not safe for concurrent use.
type seriesProbe interface {
	// has reports whether the read sees a sample of the series ref in its
	// range. For a series that qualifies, lset returns its labels.
	has(ref uint64) (bool, error)
	lset() labels.Labels
}

// headProbe is a seriesProbe for the head as one querier reads it.
type headProbe struct {
	h          *head
	snap       *readSnapshot
	tombs      *headTombstones
	mint, maxt int64
	invBuf     []uint64
	it         headIterator
	cur        *memSeries
}

func (p *headProbe) has(ref uint64) (bool, error) {
	s := p.h.series.getByRef(SeriesRef(ref))
	if s == nil {
		return false, nil // created or removed concurrently
	}
	p.cur = s
	deleted := p.tombs.get(s.ref)
	if len(deleted) == 0 {
		s.mu.Lock()
		v := s.quickVisibleLocked(p.snap, p.mint, p.maxt)
		s.mu.Unlock()
		if v != maybe {
			return v == yes, nil
		}
	}
	hs, err := s.firstVisible(p.snap, deleted, p.mint, p.maxt, &p.invBuf, &p.it, nil)
	p.it.reset(nil) // drop the captured chunks
	return hs != nil, err
}

func (p *headProbe) lset() labels.Labels { return p.cur.lset }

// verdict is the answer of a quick check: yes, no, or maybe (look closer).
type verdict int8

const (
	maybe verdict = iota
	yes
	no
)

// quickVisibleLocked tells from the chunks' time ranges and the write-ID
// ring alone whether snap sees a sample of s in [mint, maxt], ignoring
// deletions; maybe if that takes reading samples. The caller holds s.mu.
func (s *memSeries) quickVisibleLocked(snap *readSnapshot, mint, maxt int64) verdict {
	v := s.quickVisibleInOrderLocked(snap, mint, maxt)
	if v == no && s.hasLateLocked() {
		return maybe // the late samples may hold one
	}
	return v
}

// quickVisibleInOrderLocked is quickVisibleLocked for the in-order
// samples alone.
func (s *memSeries) quickVisibleInOrderLocked(snap *readSnapshot, mint, maxt int64) verdict {
	if len(s.chunks) == 0 || s.lastTLocked() < mint || s.chunks[0].minTime > maxt {
		return no
	}
	// lastTLocked is the newest sample's time: the usual case, a range
	// that reaches the present, ends here.
	if s.lastTLocked() <= maxt && newestVisible(snap, &s.txs) {
		return yes
	}
	if !allVisible(snap, &s.txs) {
		return maybe
	}
	// Every sample is visible; a chunk's first and last samples are at its
	// minTime and maxTime.
	for i := len(s.chunks) - 1; i >= 0; i-- {
		c := &s.chunks[i]
		if c.maxTime < mint {
			break
		}
		if c.minTime > maxt {
			continue
		}
		if c.minTime >= mint || c.maxTime <= maxt {
			return yes
		}
		return maybe // the chunk spans the whole range
	}
	return no
}

// blockProbe is a seriesProbe for a block as one querier reads it.
type blockProbe struct {
	b          *Block
	tombs      tombstones.Reader
	mint, maxt int64
	builder    labels.ScratchBuilder
	metas      []index.ChunkMeta
	it         chunks.Iterator
}

func (p *blockProbe) has(ref uint64) (bool, error) {
	if err := p.b.index.Series(ref, &p.builder, &p.metas); err != nil {
		return false, fmt.Errorf("tsdb: block %s: series %d: %w", p.b.dir, ref, err)
	}
	itvs, err := p.tombs.Get(ref)
	if err != nil {
		return false, fmt.Errorf("tsdb: block %s: tombstones: %w", p.b.dir, err)
	}
	for _, m := range p.metas {
		if m.MaxTime < p.mint || m.MinTime > p.maxt {
			continue
		}
		if len(itvs) == 0 && (m.MinTime >= p.mint || m.MaxTime <= p.maxt) {
			return true, nil // a chunk's first and last samples are at its bounds
		}
		c, err := p.b.chunks.Chunk(m.Ref)
		if err != nil {
			return false, fmt.Errorf("tsdb: block %s: series %s: %w", p.b.dir, p.builder.Labels(), err)
		}
		p.it = c.Iterator(p.it)
		for p.it.Next() != chunks.ValNone {
			t := p.it.AtT()
			if t > p.maxt {
				break
			}
			if t >= p.mint && !itvs.Contains(t) {
				return true, nil
			}
		}
		if err := p.it.Err(); err != nil {
			return false, fmt.Errorf("tsdb: block %s: series %s: %w", p.b.dir, p.builder.Labels(), err)
		}
	}
	return false, nil
}

func (p *blockProbe) lset() labels.Labels { return p.builder.Labels() }

// whole reports whether every series the block indexes qualifies: the
// block lies inside the range and nothing in it is deleted.
func (p *blockProbe) whole() bool {
	return p.b.meta.MinTime >= p.mint && p.b.meta.MaxTime-1 <= p.maxt && p.tombs.Total() == 0
}

// labelSource is one part of what a querier reads, a block or the head,
// with a fresh probe. Its results are sorted.
type labelSource interface {
	// labelValues returns the values of name among the series the read
	// sees.
	labelValues(ctx context.Context, name string) ([]string, error)
	// labelNames returns the label names of the series the read sees.
	labelNames(ctx context.Context) ([]string, error)
	// collect calls pick with the labels of every series matching ms that
	// the read sees.
	collect(ctx context.Context, ms []*labels.Matcher, pick func(labels.Labels)) error
	String() string
}

// labelSources returns the parts of the querier's data that overlap its
// range.
func (q *querier) labelSources() []labelSource {
	srcs := make([]labelSource, 0, len(q.blocks)+1)
	for i, b := range q.blocks {
		srcs = append(srcs, &blockProbe{b: b, tombs: q.blockTombs[i], mint: q.mint, maxt: q.maxt, builder: labels.NewScratchBuilder(16)})
	}
	h := q.head
	hmint := max(q.mint, q.headMint)
	if hmint > q.maxt {
		return srcs
	}
	if h.isolationOn && (hmint > h.MaxTime() || q.maxt < h.MinTime()) {
		// Nothing committed in range (see Head.selectSeries).
		return srcs
	}
	return append(srcs, &headProbe{h: h, snap: q.visible, tombs: q.headTombs, mint: hmint, maxt: q.maxt})
}

func (p *headProbe) String() string  { return "head" }
func (p *blockProbe) String() string { return "block " + p.b.dir }

// anyRef reports whether refs holds a series the probe accepts. It stops
// at the first one.
func anyRef(ctx context.Context, probe seriesProbe, refs index.RefList) (bool, error) {
	i := 0
	for ref := range refs.All() {
		if i%ctxCheckInterval == ctxCheckInterval-1 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		i++
		if ok, err := probe.has(ref); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// anyPosting is anyRef for postings.
func anyPosting(ctx context.Context, probe seriesProbe, p index.Postings) (bool, error) {
	for n := 0; p.Next(); n++ {
		if n%ctxCheckInterval == ctxCheckInterval-1 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		if ok, err := probe.has(p.At()); ok || err != nil {
			return ok, err
		}
	}
	return false, p.Err()
}

// collectMatching calls pick with the labels of every series of ix
// matching ms that probe accepts.
func collectMatching(ctx context.Context, probe seriesProbe, ix index.PostingsReader, ms []*labels.Matcher, pick func(labels.Labels)) error {
	p, err := index.PostingsForMatchers(ix, ms...)
	if err != nil {
		return err
	}
	for n := 0; p.Next(); n++ {
		if n%ctxCheckInterval == ctxCheckInterval-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ok, err := probe.has(p.At())
		if err != nil {
			return err
		}
		if ok {
			pick(probe.lset())
		}
	}
	return p.Err()
}

func (p *headProbe) labelValues(ctx context.Context, name string) ([]string, error) {
	values, lists := p.h.postings.SortedLabelValuesWithPostings(name)
	out := make([]string, 0, len(values))
	for i, v := range values {
		if i%ctxCheckInterval == ctxCheckInterval-1 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		ok, err := anyRef(ctx, p, lists[i])
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}

func (p *headProbe) labelNames(ctx context.Context) ([]string, error) {
	names, lists := p.h.postings.SortedLabelNamesWithPostings()
	out := make([]string, 0, len(names))
	for i, name := range names {
		ok, err := anyRef(ctx, p, lists[i])
		if err == nil && !ok {
			// Rare: the first candidate does not qualify; try the others.
			_, lists := p.h.postings.SortedLabelValuesWithPostings(name)
			for _, l := range lists {
				if ok, err = anyRef(ctx, p, l); ok || err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, name)
		}
	}
	return out, nil
}

func (p *headProbe) collect(ctx context.Context, ms []*labels.Matcher, pick func(labels.Labels)) error {
	return collectMatching(ctx, p, p.h.postings, ms, pick)
}

func (p *blockProbe) labelValues(ctx context.Context, name string) ([]string, error) {
	if p.whole() {
		return p.b.index.SortedLabelValues(name)
	}
	var out []string
	err := p.b.index.ForEachValue(name, func(v string, ps index.Postings) error {
		ok, err := anyPosting(ctx, p, ps)
		if ok {
			out = append(out, v)
		}
		return err
	})
	return out, err
}

func (p *blockProbe) labelNames(ctx context.Context) ([]string, error) {
	names, err := p.b.index.LabelNames()
	if err != nil || p.whole() {
		return names, err
	}
	out := names[:0]
	for _, name := range names {
		found := false
		err := p.b.index.ForEachValue(name, func(_ string, ps index.Postings) error {
			ok, err := anyPosting(ctx, p, ps)
			if err == nil && ok {
				found = true
				return errStopWalk
			}
			return err
		})
		if err != nil && !errors.Is(err, errStopWalk) {
			return nil, err
		}
		if found {
			out = append(out, name)
		}
	}
	return out, nil
}

func (p *blockProbe) collect(ctx context.Context, ms []*labels.Matcher, pick func(labels.Labels)) error {
	return collectMatching(ctx, p, p.b.index, ms, pick)
}

func (q *querier) LabelValues(ctx context.Context, name string, ms ...*labels.Matcher) ([]string, error) {
	if !q.rlockOpen() {
		return nil, fmt.Errorf("tsdb: label values: %w", ErrClosed)
	}
	defer q.mu.RUnlock()
	srcs := q.labelSources()
	if len(ms) == 0 {
		sets := make([][]string, 0, len(srcs))
		for i := range srcs {
			vs, err := srcs[i].labelValues(ctx, name)
			if err != nil {
				return nil, fmt.Errorf("tsdb: label values of %s: %w", srcs[i], err)
			}
			sets = append(sets, vs)
		}
		return mergeStrings(sets), nil
	}
	set := map[string]struct{}{}
	for i := range srcs {
		err := srcs[i].collect(ctx, ms, func(ls labels.Labels) {
			if v := ls.Get(name); v != "" {
				if _, ok := set[v]; !ok {
					set[v] = struct{}{}
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("tsdb: label values of %s: %w", srcs[i], err)
		}
	}
	return sortedKeys(set), nil
}

func (q *querier) LabelNames(ctx context.Context, ms ...*labels.Matcher) ([]string, error) {
	if !q.rlockOpen() {
		return nil, fmt.Errorf("tsdb: label names: %w", ErrClosed)
	}
	defer q.mu.RUnlock()
	srcs := q.labelSources()
	if len(ms) == 0 {
		sets := make([][]string, 0, len(srcs))
		for i := range srcs {
			ns, err := srcs[i].labelNames(ctx)
			if err != nil {
				return nil, fmt.Errorf("tsdb: label names of %s: %w", srcs[i], err)
			}
			sets = append(sets, ns)
		}
		return mergeStrings(sets), nil
	}
	set := map[string]struct{}{}
	for i := range srcs {
		err := srcs[i].collect(ctx, ms, func(ls labels.Labels) {
			ls.Range(func(l labels.Label) { set[l.Name] = struct{}{} })
		})
		if err != nil {
			return nil, fmt.Errorf("tsdb: label names of %s: %w", srcs[i], err)
		}
	}
	return sortedKeys(set), nil
}

// sortedKeys returns the keys of set, sorted; nil if there are none.
func sortedKeys(set map[string]struct{}) []string {
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// mergeStrings merges sorted string lists into one sorted list without
// duplicates.
func mergeStrings(lists [][]string) []string {
	var out []string
	if len(lists) == 1 {
		out = lists[0] // already sorted and unique
	} else {
		for _, l := range lists {
			out = append(out, l...)
		}
		slices.Sort(out)
		out = slices.Compact(out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
