package tsdb

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The module's package layering: which of its packages may import which.
// Paths are relative to the module root ("." is package tsdb itself); a
// pattern ending in "/*" matches every package below that directory, so
// that new internal packages fall under the internal/ rule. The rules,
// bottom up:
//
//   - labels, vfs, histogram and value import nothing of ours;
//   - internal/* may import labels, vfs, chunks and each other (never the
//     root: it is the layer the root is built from);
//   - chunks may import labels, vfs and internal/*;
//   - the root may import all of the above;
//   - check (the offline checker) reads the files with the same layers,
//     never through the root;
//   - web, cmd/* and the nested modules prom/ and ship/ are users: the public
//     packages only (cmd/* also web, and the command-line tool's package
//     cmd/tsdb/cli, which prom/ builds with more commands, ship/'s upload
//     among them: prom/ may import ship/ too), never internal/;
//   - except prom/remote, the remote-write sender, which tails the WAL as
//     check reads it: through internal/wlog and internal/record (and the
//     corruption error of internal/corrupt). It lives in prom/ for
//     Prometheus's client and protobufs, not because it is a user.
//
// Tests of a package may import whatever the package may, and the public
// packages besides (tests of internal/ build their data with the root,
// say), as long as Go accepts the import (no cycle).
var layering = []struct {
	pkg     string
	imports []string
}{
	{"labels", nil},
	{"vfs", nil},
	{"histogram", nil},
	{"value", nil},
	{"histogram/histogramtest", []string{"histogram", "value"}},
	{"internal/*", []string{"labels", "vfs", "histogram", "value", "chunks", "internal/*"}},
	{"chunks", []string{"labels", "vfs", "histogram", "value", "internal/*"}},
	{".", []string{"labels", "vfs", "histogram", "value", "chunks", "internal/*"}},
	{"check", []string{"labels", "vfs", "histogram", "value", "chunks", "internal/*"}},
	{"web", publicPackages},
	{"cmd/*", append([]string{"web", "cmd/tsdb/cli"}, publicPackages...)},
	{"prom/remote", append([]string{"prom/*", "internal/wlog", "internal/record", "internal/corrupt"}, publicPackages...)},
	{"prom/*", append([]string{"web", "prom/*", "cmd/tsdb/cli", "ship", "ship/*"}, publicPackages...)},
	{"ship", publicPackages},
	{"ship/*", append([]string{"ship", "ship/*", "cmd/tsdb/cli"}, publicPackages...)},
}

// publicPackages are the packages an embedder may import.
var publicPackages = []string{".", "labels", "vfs", "histogram", "value", "chunks", "check"}

// testImportsAlso are what tests may import beyond the package's rule.
// histogramtest is a public package of test helpers, for tests only;
// ship/shiptest too (it runs SeaweedFS for ship/'s and prom/'s end-to-end
// tests; only modules requiring ship/ can import it).
var testImportsAlso = append([]string{"web", "histogram/histogramtest", "ship/shiptest"}, publicPackages...)

// matchPkg reports whether the module-relative package path pkg matches
// pattern: equal, or below dir for a pattern "dir/*".
func matchPkg(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(pkg, dir+"/")
	}
	return pattern == pkg
}

// mayImport reports whether package from may import package to (both
// module-relative); test says the import is in a test file of from. A
// package no rule names may import nothing of ours: a new top-level
// package needs its line in the table.
func mayImport(from, to string, test bool) bool {
	if from == to {
		return true // an external test package importing its package
	}
	for _, r := range layering {
		if !matchPkg(r.pkg, from) {
			continue
		}
		allowed := r.imports
		if test {
			allowed = append(slices.Clone(allowed), testImportsAlso...)
		}
		return slices.ContainsFunc(allowed, func(p string) bool { return matchPkg(p, to) })
	}
	return false
}

func TestMayImport(t *testing.T) {
	cases := []struct {
		from, to string
		test     bool
		want     bool
	}{
		{"labels", "vfs", false, false},
		{"labels", "labels", true, true},
		{"vfs", "labels", false, false},
		{"histogram", "labels", false, false},
		{"chunks", "histogram", false, true},
		{"chunks", "histogram/histogramtest", false, false},
		{"chunks", "histogram/histogramtest", true, true},
		{"internal/index", "labels", false, true},
		{"internal/index", "internal/lockorder", false, true},
		{"internal/index", ".", false, false},
		{"internal/index", ".", true, true},
		{"internal/chunkseg", "chunks", false, true},
		{"internal/corrupt", "internal/encoding", false, true},
		{"internal/a/b", "internal/c", false, true},
		{"internal/wlog", "check", false, false},
		{"chunks", "internal/encoding", false, true},
		{"chunks", ".", false, false},
		{".", "internal/wlog", false, true},
		{".", "check", false, false},
		{".", "check", true, true},
		{".", "web", false, false},
		{"check", ".", false, false},
		{"check", "internal/index", false, true},
		{"web", ".", false, true},
		{"web", "internal/index", false, false},
		{"cmd/tsdb", "check", false, true},
		{"cmd/tsdb", "web", false, true},
		{"cmd/tsdb", "internal/wlog", false, false},
		{"cmd/tsdb", "internal/wlog", true, false},
		{"prom/storage", ".", false, true},
		{"prom/interop", "internal/wlog", true, false},
		{"prom/bench", "prom/storage", false, true},
		{"newpkg", "labels", false, false},
		{"internalx", "labels", false, false},
		{"internal", "labels", false, false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, mayImport(c.from, c.to, c.test), "%s imports %s (test: %v)", c.from, c.to, c.test)
	}
}

const modulePath = "github.com/isotsdb/tsdb"

// TestLayering checks every import of the module's packages, and of the
// nested modules prom/, ship/ and ship/thanosmeta, against the layering
// table.
func TestLayering(t *testing.T) {
	var bad []string
	for _, dir := range []string{".", "prom", "ship", "ship/thanosmeta"} {
		for _, e := range moduleImports(t, dir) {
			if !mayImport(e.from, e.to, e.test) {
				where := "package"
				if e.test {
					where = "test"
				}
				bad = append(bad, fmt.Sprintf("%s imports %s (%s)", e.from, e.to, where))
			}
		}
	}
	require.Empty(t, bad, "imports against the layering (see layering_test.go and README.md)")
}

// importEdge is one import of one of our packages by another.
type importEdge struct {
	from, to string // module-relative
	test     bool
}

// moduleImports lists the imports of our packages by the packages of the
// module in dir, with go list.
func moduleImports(t *testing.T, dir string) []importEdge {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .TestImports \",\"}},{{join .XTestImports \",\"}}", "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "go list in %s: %s", dir, stderr)
	rel := func(p string) (string, bool) {
		if p == modulePath {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, modulePath+"/")
		return r, ok
	}
	var edges []importEdge
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Split(strings.TrimSpace(line), "|")
		require.Len(t, fields, 3, "go list line %q", line)
		from, ok := rel(fields[0])
		require.True(t, ok, "package %s outside the module", fields[0])
		for i, list := range fields[1:] {
			for imp := range strings.SplitSeq(list, ",") {
				if to, ok := rel(imp); ok {
					edges = append(edges, importEdge{from: from, to: to, test: i == 1})
				}
			}
		}
	}
	require.NotEmpty(t, edges, "no imports found in %s", dir)
	return edges
}
