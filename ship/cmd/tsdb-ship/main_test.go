package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// writeDB writes 7 hours of 5 series at 15 s into a new DB at dir and
// cuts its blocks: two 2h blocks (the head keeps the rest).
func writeDB(t *testing.T, dir string) {
	t.Helper()
	o := tsdb.DefaultOptions()
	o.MaxBlockDuration = o.MinBlockDuration
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	ctx := context.Background()
	for ts := int64(0); ts < 7*3600*1000; ts += 15000 {
		app := db.Appender(ctx)
		for i := range 5 {
			_, err := app.Append(0, labels.FromStrings("__name__", "m", "i", fmt.Sprint(i)), ts, float64(ts))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.NoError(t, db.Close())
}

func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUpload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	writeDB(t, dir)
	bucketDir := t.TempDir()
	conf := filepath.Join(t.TempDir(), "bucket.yml")
	require.NoError(t, os.WriteFile(conf, []byte("type: FILESYSTEM\nconfig:\n  directory: "+bucketDir+"\n"), 0o666))
	badConf := filepath.Join(t.TempDir(), "bad.yml")
	require.NoError(t, os.WriteFile(badConf, []byte("type: TAPE\n"), 0o666))

	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		stdout  string
		stderr  string
		shipped bool
	}{
		{"no config flag", []string{"upload", dir}, exitUsage, "", "objstore.config-file", false},
		{"bad label", []string{"upload", dir, "--objstore.config-file", conf, "--external-label", "nolabel"}, exitError, "", "name=value", false},
		{"bad config", []string{"upload", dir, "--objstore.config-file", badConf}, exitError, "", "bad object storage config", false},
		{"missing config", []string{"upload", dir, "--objstore.config-file", conf + ".none"}, exitError, "", "no such file", false},
		{"upload", []string{"upload", dir, "--objstore.config-file", conf, "--external-label", "cluster=a"}, exitOK, "uploaded 2 of 2 blocks", "", true},
		{"again: nothing to do", []string{"upload", dir, "--objstore.config-file", conf}, exitOK, "uploaded 0 of 0 blocks", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(tc.args...)
			require.Equal(t, tc.code, code, "stdout %s\nstderr %s", out, stderr)
			require.Contains(t, out, tc.stdout)
			require.Contains(t, stderr, tc.stderr)
			_, err := os.Stat(filepath.Join(dir, "thanos.shipper.json"))
			require.Equal(t, tc.shipped, err == nil, "%v", err)
		})
	}
	metas, err := filepath.Glob(filepath.Join(bucketDir, "*", "meta.json"))
	require.NoError(t, err)
	require.Len(t, metas, 2)
}
