package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/cmd/tsdb/cli"
	"github.com/isotsdb/tsdb/labels"
)

// runTool runs the tool as main does, with this build's commands.
func runTool(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Run(context.Background(), args, &out, &errOut, commands()...)
	return code, out.String(), errOut.String()
}

// writeBlocks writes 7 h of 3 series at 15 s into a new DB at dir and
// cuts its 2 h blocks (the head keeps the rest); it returns their ULIDs.
func writeBlocks(t *testing.T, dir string) []string {
	t.Helper()
	o := tsdb.DefaultOptions()
	o.MaxBlockDuration = o.MinBlockDuration
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	ctx := context.Background()
	for ts := int64(0); ts < 7*3600*1000; ts += 15000 {
		app := db.Appender(ctx)
		for i := range 3 {
			_, err := app.Append(0, labels.FromStrings("__name__", "m", "i", fmt.Sprint(i)), ts, float64(ts))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	var ids []string
	for _, b := range db.Blocks() {
		ids = append(ids, b.ULID.String())
	}
	require.NoError(t, db.Close())
	slices.Sort(ids)
	return ids
}

// TestUpload runs "tsdb upload" of this build against a filesystem
// bucket: the blocks land in the bucket with a thanos section carrying
// the external labels, the data directory records them as shipped (which
// "tsdb ls" shows), a second run uploads nothing, and bad command lines
// fail with the tool's exit codes.
func TestUpload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ids := writeBlocks(t, dir)
	require.Len(t, ids, 2)
	bucketDir := t.TempDir()
	conf := filepath.Join(t.TempDir(), "bucket.yml")
	require.NoError(t, os.WriteFile(conf, []byte("type: FILESYSTEM\nconfig:\n  directory: "+bucketDir+"\n"), 0o666))

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no config flag", []string{"upload", dir}, 2, "", "required flag(s) '--objstore.config-file' not provided"},
		{"bad label", []string{"upload", dir, "--objstore.config-file", conf, "--external-label", "cluster"}, 1, "", "tsdb upload: cli: external label must be name=value"},
		{"upload", []string{"upload", dir, "--objstore.config-file", conf, "--external-label", "cluster=eu1", "--external-label", "replica=a"}, 0, "uploaded 2 of 2 blocks", ""},
		{"again: nothing to do", []string{"upload", dir, "--objstore.config-file", conf}, 0, "uploaded 0 of 0 blocks", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runTool(tc.args...)
			require.Equal(t, tc.code, code, "stdout %s\nstderr %s", out, stderr)
			require.Contains(t, out, tc.stdout)
			require.Contains(t, stderr, tc.stderr)
		})
	}

	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(bucketDir, id, "meta.json"))
		require.NoError(t, err, "block %s not in the bucket", id)
		var meta struct {
			Thanos struct {
				Labels map[string]string `json:"labels"`
				Source string            `json:"source"`
			} `json:"thanos"`
		}
		require.NoError(t, json.Unmarshal(b, &meta))
		require.Equal(t, map[string]string{"cluster": "eu1", "replica": "a"}, meta.Thanos.Labels, id)
		require.Equal(t, "isotsdb", meta.Thanos.Source, id)
		_, err = os.Stat(filepath.Join(bucketDir, id, "index"))
		require.NoError(t, err)
	}

	code, out, stderr := runTool("ls", dir)
	require.Equal(t, 0, code, stderr)
	for _, id := range ids {
		require.Regexp(t, `(?m)^  `+regexp.QuoteMeta(id)+` .* yes *$`, out)
	}
}
