package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLsShipped: with a thanos.shipper.json in the data directory, ls
// marks each block shipped or not; without one it shows no such column.
func TestLsShipped(t *testing.T) {
	dir := writeInspectDB(t)
	blocks := blockDirs(t, dir)
	require.GreaterOrEqual(t, len(blocks), 2)
	shipperPath := filepath.Join(dir, "thanos.shipper.json")

	for _, tc := range []struct {
		name     string
		file     string // "" writes none
		marks    []string
		warning  string
		noColumn bool
	}{
		{name: "no shipper file", noColumn: true},
		{name: "first shipped", file: `{"version":1,"uploaded":["` + blocks[0] + `"]}`, marks: append([]string{"yes"}, repeat("no", len(blocks)-1)...)},
		{name: "none shipped", file: `{"version":1,"uploaded":[]}`, marks: repeat("no", len(blocks))},
		{name: "all shipped, Thanos's indented form", file: "{\n\t\"version\": 1,\n\t\"uploaded\": [\n\t\t\"" + blocks[0] + "\",\n\t\t\"" + blocks[1] + "\"\n\t]\n}", marks: append([]string{"yes", "yes"}, repeat("no", len(blocks)-2)...)},
		{name: "bad file", file: `{"version":1,`, marks: repeat("?", len(blocks)), warning: "thanos.shipper.json"},
		{name: "unknown version", file: `{"version":7,"uploaded":[]}`, marks: repeat("?", len(blocks)), warning: "version 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(shipperPath))
			if tc.file != "" {
				require.NoError(t, os.WriteFile(shipperPath, []byte(tc.file), 0o666))
			}
			code, out, stderr := runCLI(t, "ls", dir)
			require.Equal(t, exitOK, code, stderr)
			if tc.noColumn {
				require.NotContains(t, out, "SHIPPED")
				require.Empty(t, stderr)
				return
			}
			require.Regexp(t, `(?m)^  BLOCK ULID .* LEVEL  SHIPPED$`, out)
			for i, b := range blocks {
				require.Regexp(t, `(?m)^  `+b+` .* \d  `+regexp.QuoteMeta(tc.marks[i])+` *$`, out)
			}
			if tc.warning == "" {
				require.Empty(t, stderr)
			} else {
				require.Contains(t, stderr, tc.warning)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
