package index

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

func TestMemPostingsCheckInvariants(t *testing.T) {
	p := NewMemPostings()
	require.NoError(t, p.CheckInvariants())
	for ref := uint64(1); ref <= 20; ref++ {
		p.Add(ref, labels.FromStrings("a", string(rune('0'+ref%3)), "b", "x"))
	}
	p.Add(7, labels.FromStrings("a", "1", "b", "x")) // re-add: no effect
	require.NoError(t, p.CheckInvariants())
	p.Delete(map[uint64]struct{}{3: {}, 4: {}})
	p.DeleteAffected(map[uint64]struct{}{5: {}}, map[labels.Label]struct{}{{Name: "a", Value: "2"}: {}, {Name: "b", Value: "x"}: {}})
	require.NoError(t, p.CheckInvariants())

	// Each corruption is found, and named.
	corruptions := []struct {
		name   string
		mangle func(m map[string]map[string]refList)
		want   string
	}{
		{"unsorted", func(m map[string]map[string]refList) { m["b"]["x"] = refList{small: []uint64{2, 1}} }, `postings of b="x": ref 1 at position 1 follows 2`},
		{"duplicate", func(m map[string]map[string]refList) { m["b"]["x"] = refList{small: []uint64{1, 1}} }, `postings of b="x": ref 1 at position 1 follows 1`},
		{"empty list", func(m map[string]map[string]refList) { m["b"]["y"] = refList{} }, `postings of b="y": empty list kept`},
		{"empty name", func(m map[string]map[string]refList) { m["c"] = map[string]refList{} }, `label name "c" has no values`},
		{"not in all", func(m map[string]map[string]refList) { m["b"]["x"] = refList{small: []uint64{1, 99}} }, `series 99 is missing from the list of all series`},
		{"all unsorted", func(m map[string]map[string]refList) { m[""][""] = refList{small: []uint64{9, 8}} }, `postings of all series: ref 8`},
		{"empty name value", func(m map[string]map[string]refList) { m[""]["v"] = refList{small: []uint64{1}} }, `the empty label name has value "v"`},
		{"plain too long", func(m map[string]map[string]refList) { m["b"]["x"] = refList{small: seq(1, packAt+1)} }, `plain list of 65 references`},
		{"packed too short", func(m map[string]map[string]refList) { m["b"]["x"] = refList{p: pack(seq(1, 3))} }, `packed list of 3 references, below 64`},
		{"packed count", func(m map[string]map[string]refList) {
			l := newRefList(seq(1, 200))
			l.p.n++
			m["b"]["x"] = l
		}, `packed block 3: bad delta at offset 196`},
		{"packed last", func(m map[string]map[string]refList) {
			l := newRefList(seq(1, 200))
			l.p.last = 7
			m["b"]["x"] = l
		}, `packed list of 200 references ends at 200, holds 7 as the last`},
	}
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			q := NewMemPostings()
			for ref := uint64(1); ref <= 3; ref++ {
				q.Add(ref, labels.FromStrings("b", "x"))
			}
			c.mangle(q.m)
			err := q.CheckInvariants()
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
		})
	}
}

// seq returns the references from, from+1, ..., to.
func seq(from, to uint64) []uint64 {
	var out []uint64
	for r := from; r <= to; r++ {
		out = append(out, r)
	}
	return out
}
