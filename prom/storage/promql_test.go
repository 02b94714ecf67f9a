package promstorage_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"
)

// suiteFile is one file of Prometheus's built-in PromQL test suite.
type suiteFile struct {
	evals int // eval commands in the file
}

// classifySuiteFile counts the eval commands of a test file. Every file is
// run: isotsdb stores all that the suite loads (floats, native histograms
// and start timestamps).
func classifySuiteFile(content string) suiteFile {
	var f suiteFile
	for line := range strings.SplitSeq(content, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "eval ") || strings.HasPrefix(line, "eval_") {
			f.evals++
		}
	}
	return f
}

// suiteFiles reads the built-in test files from the source of the
// Prometheus module this test is built with (the same files promqltest
// embeds), keyed by the names RunBuiltinTestsWithStorage gives its
// subtests.
func suiteFiles(t *testing.T) map[string]suiteFile {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/prometheus/prometheus").Output()
	require.NoError(t, err, "locating the prometheus module")
	dir := filepath.Join(strings.TrimSpace(string(out)), "promql", "promqltest", "testdata")
	names, err := filepath.Glob(filepath.Join(dir, "*.test"))
	require.NoError(t, err)
	require.NotEmpty(t, names, "no test files in %s", dir)
	files := map[string]suiteFile{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		files["testdata/"+filepath.Base(n)] = classifySuiteFile(string(b))
	}
	return files
}

// suiteRunner is the promqltest.TBRun given to RunBuiltinTestsWithStorage:
// it runs each file as a subtest and tallies the results.
type suiteRunner struct {
	*testing.T
	files map[string]suiteFile

	seen          int
	passedFiles   []string
	passedEvals   int
	expectedEvals int // evals of the files run
}

// Run implements promqltest.TBRun.
func (r *suiteRunner) Run(name string, f func(*testing.T)) bool {
	file, ok := r.files[name]
	if !ok {
		r.Errorf("promqltest runs %s, which is not among the module's test files", name)
		return false
	}
	r.seen++
	r.expectedEvals += file.evals
	passed := r.T.Run(name, f)
	if passed {
		r.passedFiles = append(r.passedFiles, name)
		r.passedEvals += file.evals
	}
	return passed
}

// TestPromQLSuite runs Prometheus's own PromQL acceptance tests against
// isotsdb through the adapter: every eval of every file must pass.
func TestPromQLSuite(t *testing.T) {
	r := &suiteRunner{T: t, files: suiteFiles(t)}
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	promqltest.RunBuiltinTestsWithStorage(r, engine, func(tb testing.TB) storage.Storage {
		return newStorage(tb)
	})

	t.Logf("PromQL suite: %d of %d files passed, %d evals", len(r.passedFiles), len(r.files), r.passedEvals)
	require.Equal(t, len(r.files), r.seen, "promqltest ran a different set of files")
	require.Len(t, r.passedFiles, len(r.files), "every file must pass")
	require.Equal(t, r.expectedEvals, r.passedEvals, "evals of the files run must all pass")
}
