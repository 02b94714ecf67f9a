package interop

import (
	"testing"

	"github.com/prometheus/prometheus/util/compression"
)

// TestInterop runs every interop check and logs the matrix of results.
// The variants run in parallel; each writes its own data directory.
func TestInterop(t *testing.T) {
	mx := &matrix{}
	t.Cleanup(func() { t.Logf("interop matrix:\n%s", mx) })
	t.Run("prometheus-reads-isotsdb", func(t *testing.T) {
		t.Parallel()
		for _, snappy := range []bool{false, true} {
			name := "wal=none"
			if snappy {
				name = "wal=snappy"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testPrometheusReadsIsotsdb(t, mx, snappy)
			})
			t.Run("histograms, "+name, func(t *testing.T) {
				t.Parallel()
				testPrometheusReadsIsotsdbHistograms(t, mx, snappy)
			})
		}
	})
	t.Run("isotsdb-reads-prometheus", func(t *testing.T) {
		t.Parallel()
		for _, comp := range []compression.Type{compression.None, compression.Snappy, compression.Zstd} {
			t.Run("wal="+string(comp), func(t *testing.T) {
				t.Parallel()
				testIsotsdbReadsPrometheus(t, mx, comp)
			})
		}
	})
	t.Run("snapshot", func(t *testing.T) {
		t.Parallel()
		testSnapshot(t, mx)
	})
}
