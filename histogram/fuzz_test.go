package histogram

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzInput turns fuzzer bytes into histogram fields. It favours values near
// the edges Validate checks (small offsets and counts, matching lengths and
// totals, special floats) and returns zero once the bytes run out.
type fuzzInput struct{ b []byte }

func (in *fuzzInput) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	c := in.b[0]
	in.b = in.b[1:]
	return c
}

func (in *fuzzInput) uint32() uint32 {
	var buf [4]byte
	for i := range buf {
		buf[i] = in.byte()
	}
	return binary.LittleEndian.Uint32(buf[:])
}

func (in *fuzzInput) uint64() uint64 {
	return uint64(in.uint32())<<32 | uint64(in.uint32())
}

// small returns a value in −4…11 most of the time, an arbitrary int64 else.
func (in *fuzzInput) small() int64 {
	c := in.byte()
	if c < 240 {
		return int64(c%16) - 4
	}
	return int64(in.uint64())
}

func (in *fuzzInput) float() float64 {
	switch c := in.byte(); c % 8 {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return math.Float64frombits(in.uint64())
	case 4:
		return math.Copysign(0, -1)
	default:
		return float64(int64(c/8) - 8)
	}
}

func (in *fuzzInput) schema() int32 {
	switch c := in.byte(); {
	case c < 200:
		return int32(c%15) - 5 // −5…9: every exponential schema and both neighbours
	case c < 240:
		return CustomBucketsSchema
	default:
		return int32(in.uint32())
	}
}

func (in *fuzzInput) spans() []Span {
	n := int(in.byte() % 5)
	if n == 0 && in.byte()%2 == 0 {
		return nil
	}
	spans := make([]Span, n)
	for i := range spans {
		off := in.small()
		if in.byte() == 255 {
			off = int64(int32(in.uint32()))
		}
		spans[i] = Span{Offset: int32(off), Length: uint32(in.byte() % 6)}
	}
	return spans
}

// bucketCount is how many buckets to give spans: usually what they need.
func (in *fuzzInput) bucketCount(spans []Span) int {
	n := spanBuckets(spans)
	if c := in.byte(); c >= 224 {
		n += int(c%4) - 2
	}
	return max(n, 0)
}

func (in *fuzzInput) customValues() []float64 {
	switch c := in.byte(); {
	case c < 16:
		return nil
	case c < 32:
		return []float64{}
	case c < 128:
		// Increasing, possibly spoilt below.
		vs := make([]float64, c%8+1)
		v := in.float()
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		for i := range vs {
			vs[i] = v
			v += float64(in.byte()%4) + 0.5
		}
		if in.byte() < 32 {
			vs[int(in.byte())%len(vs)] = in.float()
		}
		return vs
	default:
		vs := make([]float64, c%6)
		for i := range vs {
			vs[i] = in.float()
		}
		return vs
	}
}

// fuzzHistogram decodes an integer histogram, valid often enough to exercise
// the checks after the first.
func fuzzHistogram(data []byte) *Histogram {
	in := &fuzzInput{b: data}
	h := &Histogram{
		CounterResetHint: CounterResetHint(in.byte() % 5),
		Schema:           in.schema(),
		PositiveSpans:    in.spans(),
		NegativeSpans:    in.spans(),
	}
	if in.byte() < 64 {
		h.ZeroThreshold = in.float()
	}
	if in.byte() < 64 {
		h.ZeroCount = uint64(in.small())
	}
	fill := func(spans []Span) []int64 {
		n := in.bucketCount(spans)
		if n == 0 && in.byte()%2 == 0 {
			return nil
		}
		bs := make([]int64, n)
		for i := range bs {
			bs[i] = in.small()
		}
		return bs
	}
	h.PositiveBuckets = fill(h.PositiveSpans)
	h.NegativeBuckets = fill(h.NegativeSpans)
	if h.Schema == CustomBucketsSchema || in.byte() < 16 {
		h.CustomValues = in.customValues()
	}
	h.Sum = in.float()
	// Count: the bucket total (the common, valid case) or something near it.
	var total uint64
	for _, bs := range [][]int64{h.PositiveBuckets, h.NegativeBuckets} {
		var cur int64
		for _, d := range bs {
			cur += d
			total += uint64(cur)
		}
	}
	if !IsCustomBucketsSchema(h.Schema) {
		total += h.ZeroCount
	}
	h.Count = total + uint64(in.small())
	if in.byte() < 128 {
		h.Count = total
	}
	return h
}

// fuzzFloatHistogram decodes a float histogram: an integer one converted,
// then possibly given fractional, negative or NaN counts and unused fields.
func fuzzFloatHistogram(data []byte) *FloatHistogram {
	h := fuzzHistogram(data)
	fh := h.ToFloat()
	in := &fuzzInput{b: data[min(len(data), len(data)/2):]}
	for range in.byte() % 4 {
		v := in.float()
		switch in.byte() % 6 {
		case 0:
			fh.Count = v
		case 1:
			fh.ZeroCount = v
		case 2:
			if len(fh.PositiveBuckets) > 0 {
				fh.PositiveBuckets[int(in.byte())%len(fh.PositiveBuckets)] = v
			}
		case 3:
			if len(fh.NegativeBuckets) > 0 {
				fh.NegativeBuckets[int(in.byte())%len(fh.NegativeBuckets)] = v
			}
		case 4:
			fh.NegativeSpans, fh.NegativeBuckets = h.NegativeSpans, make([]float64, len(h.NegativeBuckets))
		case 5:
			fh.CustomValues = in.customValues()
		}
	}
	return fh
}

// exactInFloat reports whether every count of h (after decoding) and its
// total fit in 53 bits, so ToFloat represents them exactly.
func exactInFloat(h *Histogram) bool {
	const limit = 1 << 53
	if h.Count > limit || h.ZeroCount > limit {
		return false
	}
	for _, bs := range [][]int64{h.PositiveBuckets, h.NegativeBuckets} {
		var cur int64
		for _, d := range bs {
			cur += d
			if d > limit || d < -limit || cur > limit {
				return false
			}
		}
	}
	return true
}

func fuzzSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 5, 1, 4, 0, 5, 2, 1, 6, 1, 0, 0, 0, 0, 5, 5, 5, 5, 5, 5, 5, 0, 0, 0, 0, 0, 0, 0, 200})
	f.Add([]byte{1, 210, 2, 4, 2, 5, 3, 0, 0, 0, 0, 5, 6, 4, 0, 50, 8, 1, 2, 3, 40, 0, 0, 0})
	f.Add([]byte{2, 6, 4, 250, 1, 2, 3, 4, 255, 0, 0, 0, 128, 5, 1, 2, 1, 0, 0, 0, 9, 9, 9, 9, 9, 9})
}

// FuzzValidate: Validate never panics, every failure wraps ErrInvalid,
// String and Copy never panic, a copy validates as the original does, and a
// valid integer histogram stays valid through ToFloat (when its counts fit in
// a float64 exactly; beyond 2^53 float rounding may make a decoded count
// negative, for Prometheus as for us).
func FuzzValidate(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h := fuzzHistogram(data)
		err := h.Validate()
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
		}
		_ = h.String()
		c := h.Copy()
		cerr := c.Validate()
		require.Equal(t, err == nil, cerr == nil, "copy validates to %v, original to %v", cerr, err)
		require.False(t, !c.Equals(h) && err == nil && !math.IsNaN(h.ZeroThreshold), "valid histogram differs from its copy: %v", h)
		fh := h.ToFloat()
		_ = fh.String()
		if err == nil && exactInFloat(h) {
			require.NoError(t, fh.Validate(), "valid %v converts to invalid %v", h, fh)
		}

		g := fuzzFloatHistogram(data)
		if err := g.Validate(); err != nil {
			require.ErrorIs(t, err, ErrInvalid)
		}
		_ = g.String()
		gerr, cerr := g.Validate(), g.Copy().Validate()
		require.Equal(t, gerr == nil, cerr == nil, "float copy validates to %v, original to %v", cerr, gerr)
	})
}
