package tsdb

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkQueryHeadLate is BenchmarkQueryHead with the out-of-order
// window on and a tenth of the samples (every tenth series' in each
// round, rotating) delivered late, four scrapes after their time, in the
// commit of a later round: reads merge them from late chunks and open
// buffers. late=0 is the same workload delivered in order.
func BenchmarkQueryHeadLate(b *testing.B) {
	lsets := loadSeries(b, 20000)
	for _, late := range []bool{false, true} {
		b.Run(fmt.Sprintf("late=%v", late), func(b *testing.B) {
			o := benchOptions(true)
			o.OutOfOrderTimeWindow = time.Hour
			db, _ := openTestDB(b, o)
			refs := make([]SeriesRef, len(lsets))
			const rounds, lag = 240, 4
			for round := 0; round < rounds+lag; round++ {
				app := db.Appender(ctx)
				for i, l := range lsets {
					held := late && (i+round)%10 == 0
					if round < rounds && !held {
						ref, err := app.Append(refs[i], l, int64(round)*15000, float64(round))
						require.NoError(b, err)
						refs[i] = ref
					}
					if r := round - lag; late && r >= 0 && (i+r)%10 == 0 {
						ref, err := app.Append(refs[i], l, int64(r)*15000, float64(r))
						require.NoError(b, err)
						refs[i] = ref
					}
				}
				require.NoError(b, app.Commit())
			}
			if want, got := 1500*rounds*b.N, benchReadHosts(b, db); got != want {
				b.Fatalf("read %d samples, want %d", got, want)
			}
		})
	}
}
