package web

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzParseTime: any string parses or fails with ErrInvalidTime, never
// panics.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"0", "1.5", "-1e3", "2024-01-01T00:00:00Z", "NaN", "1e400", "0x10p3", "9.3e15", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := parseTime(s); err != nil {
			require.ErrorIs(t, err, ErrInvalidTime)
		}
	})
}

// FuzzParseTimeRoundTrip: a millisecond timestamp written as decimal
// seconds, and (within years 0 to 9999) in RFC 3339, parses back to
// itself.
func FuzzParseTimeRoundTrip(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(1704067200123))
	f.Add(int64(-1))
	f.Add(int64(-62135596800000))
	f.Fuzz(func(t *testing.T, ms int64) {
		// Seconds in a float64 keep milliseconds exactly only up to about
		// 2^53 / 1000 seconds.
		if ms > -1<<50 && ms < 1<<50 {
			sign, abs := "", ms
			if ms < 0 {
				sign, abs = "-", -ms
			}
			s := fmt.Sprintf("%s%d.%03d", sign, abs/1000, abs%1000)
			got, err := parseTime(s)
			require.NoError(t, err, s)
			require.Equal(t, ms, got, s)
		}
		tm := time.UnixMilli(ms).UTC()
		if y := tm.Year(); y >= 0 && y <= 9999 && ms != math.MinInt64 {
			s := tm.Format(time.RFC3339Nano)
			got, err := parseTime(s)
			require.NoError(t, err, s)
			require.Equal(t, ms, got, s)
		}
	})
}
