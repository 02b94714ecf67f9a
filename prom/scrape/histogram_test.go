package scrape_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/prom/scrape"
)

// TestHistogramOptions scrapes a histogram that has both a classic and a
// native representation under the three settings of Prometheus's
// scrape_native_histograms and always_scrape_classic_histograms.
func TestHistogramOptions(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "both_seconds", Help: "Both.", Buckets: []float64{1}, NativeHistogramBucketFactor: 1.5})
	h.Observe(0.5)
	h.Observe(2)
	reg.MustRegister(h)

	for _, c := range []struct {
		name string
		opts scrape.Options
		want []string
	}{
		{"native", scrape.Options{}, []string{`both_seconds:h(count=2,sum=2.5)`}},
		{"classic", scrape.Options{IgnoreNativeHistograms: true}, []string{
			`both_seconds_bucket{le="+Inf"}:2`, `both_seconds_bucket{le="1.0"}:1`, `both_seconds_count:2`, `both_seconds_sum:2.5`,
		}},
		{"both", scrape.Options{AlwaysScrapeClassicHistograms: true}, []string{
			`both_seconds:h(count=2,sum=2.5)`,
			`both_seconds_bucket{le="+Inf"}:2`, `both_seconds_bucket{le="1.0"}:1`, `both_seconds_count:2`, `both_seconds_sum:2.5`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, t.TempDir())
			now := time.Now()
			_, err := scrape.New(db, c.opts).ScrapeGatherer(context.Background(), reg, now)
			require.NoError(t, err)
			var got []string
			for k, v := range atShort(t, db, ms(now), "", "") {
				if strings.HasPrefix(k, "both") {
					got = append(got, k+":"+v)
				}
			}
			sort.Strings(got)
			require.Equal(t, c.want, got)
		})
	}
}
