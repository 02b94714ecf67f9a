package tsdb

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRangeEnd(t *testing.T) {
	for _, tc := range []struct{ t, r, want int64 }{
		{0, 10, 10},
		{9, 10, 10},
		{10, 10, 20},
		{-1, 10, 0},
		{-10, 10, 0},
		{-11, 10, -10},
		{7_200_000 - 1, 7_200_000, 7_200_000},
	} {
		got := rangeEnd(tc.t, tc.r)
		require.Equal(t, tc.want, got, "rangeEnd(%d, %d)", tc.t, tc.r)
		require.True(t, tc.t < got && tc.t >= got-tc.r, "t inside [end-r, end)")
	}
}
