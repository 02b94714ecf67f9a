// Package tombstones holds deletion intervals and the tombstones file format.
package tombstones

// Interval is a closed time range [Mint, Maxt] in milliseconds.
type Interval struct {
	Mint, Maxt int64
}

// InBounds reports whether t lies inside the interval.
func (iv Interval) InBounds(t int64) bool {
	return t >= iv.Mint && t <= iv.Maxt
}

// Intervals is a list of intervals sorted by Mint, non-overlapping and
// non-adjacent, as kept by Add.
type Intervals []Interval

// Add inserts n and merges it with every interval it overlaps or touches, so
// the list stays sorted and disjoint. It returns a new list and leaves the
// receiver unchanged.
func (itvs Intervals) Add(n Interval) Intervals {
	if n.Mint > n.Maxt {
		return itvs
	}
	out := make(Intervals, 0, len(itvs)+1)
	inserted := false
	for _, iv := range itvs {
		switch {
		case iv.Maxt < n.Mint-1 && n.Mint != minInt64:
			out = append(out, iv)
		case iv.Mint > n.Maxt+1 && n.Maxt != maxInt64:
			if !inserted {
				out = append(out, n)
				inserted = true
			}
			out = append(out, iv)
		default: // overlaps or touches n: absorb into n
			n.Mint = min(n.Mint, iv.Mint)
			n.Maxt = max(n.Maxt, iv.Maxt)
		}
	}
	if !inserted {
		out = append(out, n)
	}
	return out
}

// Contains reports whether t falls into any interval.
func (itvs Intervals) Contains(t int64) bool {
	for _, iv := range itvs {
		if iv.InBounds(t) {
			return true
		}
		if iv.Mint > t {
			break
		}
	}
	return false
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)
