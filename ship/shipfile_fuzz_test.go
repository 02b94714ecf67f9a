package ship

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

// FuzzReadShipperFile: any content of thanos.shipper.json is read without a
// panic, either as a set of blocks or as an ErrShipperFile; a set that is
// read survives being written and read back.
func FuzzReadShipperFile(f *testing.F) {
	f.Add([]byte(`{"version":1,"uploaded":["01M8XT00RCN11AG5KHDSZGAT78","01M8XT00TZQV58JXVC234CJTTD"]}`))
	f.Add([]byte(`{"version":1,"uploaded":[]}`))
	f.Add([]byte(`{"version":2,"uploaded":null}`))
	f.Add([]byte(`{"version":1,"uploaded":["not a ulid"]}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, ShipperFile), data, 0o644))
		got, err := readShipperFile(dir)
		if err != nil {
			require.True(t, errors.Is(err, ErrShipperFile), "%v", err)
			return
		}
		ids := make([]ulid.ULID, 0, len(got))
		for id := range got {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b ulid.ULID) int { return a.Compare(b) })
		require.NoError(t, writeShipperFile(dir, ids))
		again, err := readShipperFile(dir)
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}
