package cli

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBuiltinSeriesIsTestdata keeps the built-in corpus and the repository's
// testdata/20kseries.json identical, byte for byte.
func TestBuiltinSeriesIsTestdata(t *testing.T) {
	want, err := os.ReadFile(seriesFile)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(builtinSeries))
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.NoError(t, zr.Close())
	require.True(t, bytes.Equal(want, got),
		"cmd/tsdb/cli/data/20kseries.json.gz (%d bytes unpacked) differs from %s (%d bytes); regenerate it with\n"+
			"\tgzip -9 -n -c testdata/20kseries.json > cmd/tsdb/cli/data/20kseries.json.gz", len(got), seriesFile, len(want))
}

// TestBenchWriteAnywhere runs the built command in a directory that holds
// no series file: without --series-file it ingests the built-in corpus.
func TestBenchWriteAnywhere(t *testing.T) {
	bin := tsdbBinary(t)
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, "bench", "write", "--series", "1000", "--rounds", "3", "--check-duration", "200ms")
	cmd.Dir = t.TempDir()
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "stderr: %s", errOut.String())
	report := out.String()
	require.Contains(t, report, "1,000 series in 2 targets of 500, 3 scrapes")
	require.Equal(t, 3000.0, figure(t, report, "samples"))
	require.Equal(t, 1000.0, figure(t, report, "series"))
}

// TestLoadBuiltinSeries reads the built-in corpus the way the default
// command line does and compares it with the file it was made from.
func TestLoadBuiltinSeries(t *testing.T) {
	builtin, err := loadLabelSets("", 20_000)
	require.NoError(t, err)
	file, err := loadLabelSets(seriesFile, 20_000)
	require.NoError(t, err)
	require.Len(t, builtin, 20_000)
	require.Equal(t, file, builtin)
}
