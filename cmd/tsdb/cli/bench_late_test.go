package cli

// End-to-end tests of bench write's late mode (--late-frac). They need a
// head that accepts late samples (Options.OutOfOrderTimeWindow): against a
// head that rejects them as out of order they fail, on the counts of late
// samples written and rejected.

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// lateBench is smallBench in late mode: 10% of the samples late.
func lateBench(extra ...string) []string {
	return smallBench(append([]string{"--late-frac", "0.1"}, extra...)...)
}

// TestBenchWriteLateIsolated runs bench write with late samples and
// isolation on: every late sample is written, and no read sees part of a
// commit, late samples included.
func TestBenchWriteLateIsolated(t *testing.T) {
	code, report, stderr := runCLI(t, lateBench()...)
	require.Equal(t, exitOK, code, "stderr: %s\nstdout: %s", stderr, report)
	t.Log("\n" + report)

	require.Contains(t, report, "isolation on")
	require.Contains(t, report, "late samples: 10% of each scrape, 1 to 10 scrapes late; out-of-order window 30m0s")
	// Every sample is written once, in order or late: 10% of them late.
	require.Equal(t, 40000.0, figure(t, report, "samples"))
	require.InDelta(t, 4000, figure(t, report, "late samples written"), 400)
	require.Equal(t, 0.0, figure(t, report, "late samples rejected"), "stderr: %s", stderr)
	_, samples := queryRow(t, report, "all series")
	require.Equal(t, 40000.0, samples)

	require.Greater(t, figure(t, report, "commits"), 0.0)
	require.Greater(t, figure(t, report, "reads"), 0.0)
	require.Greater(t, figure(t, report, "late samples"), 0.0, "the check wrote late samples")
	require.Equal(t, 0.0, figure(t, report, "late rejected"))
	require.Equal(t, 0.0, figure(t, report, "partial reads"))
	require.Equal(t, 0.0, figure(t, report, "backwards reads"))
	require.Equal(t, 0.0, figure(t, report, "wrong values"))
}

// TestBenchWriteLateWithoutIsolation checks that the late-mode check is
// sensitive: without isolation it catches partial reads. As in
// TestBenchWriteWithoutIsolation a run may be retried.
func TestBenchWriteLateWithoutIsolation(t *testing.T) {
	const attempts = 5
	for i := 1; i <= attempts; i++ {
		code, report, stderr := runCLI(t, lateBench("--isolation=false")...)
		require.Equal(t, exitOK, code, "partial reads without isolation are no failure; stderr: %s", stderr)
		require.Contains(t, report, "isolation off")
		require.Equal(t, 0.0, figure(t, report, "late samples rejected"), "stderr: %s", stderr)
		require.Greater(t, figure(t, report, "late samples"), 0.0, "the check wrote late samples")
		require.Equal(t, 0.0, figure(t, report, "backwards reads"))
		require.Equal(t, 0.0, figure(t, report, "wrong values"))
		if p := figure(t, report, "partial reads"); p > 0 {
			t.Logf("attempt %d: %v partial reads in %v reads", i, p, figure(t, report, "reads"))
			return
		}
		t.Logf("attempt %d saw no partial read", i)
	}
	require.Failf(t, "no partial read without isolation in late mode: the check is not sensitive", "%d attempts", attempts)
}
