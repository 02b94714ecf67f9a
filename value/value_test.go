package value

import (
	"math"
	"testing"
)

func TestIsStaleNaN(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want bool
	}{
		{StaleMarker(), true},
		{math.Float64frombits(StaleNaN), true},
		{math.NaN(), false},
		{math.Float64frombits(StaleNaN | 1<<63), false}, // the sign bit set
		{math.Float64frombits(StaleNaN + 1), false},
		{math.Inf(1), false},
		{0, false},
	} {
		if got := IsStaleNaN(c.v); got != c.want {
			t.Errorf("IsStaleNaN(%#x) = %v, want %v", math.Float64bits(c.v), got, c.want)
		}
	}
	if !math.IsNaN(StaleMarker()) {
		t.Error("the stale marker is not a NaN")
	}
}
