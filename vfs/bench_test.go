package vfs

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkAppend measures 4 KiB appends, with and without a Sync after
// each, on both implementations.
func BenchmarkAppend(b *testing.B) {
	buf := make([]byte, 4096)
	for _, sync := range []bool{false, true} {
		for _, u := range []struct {
			name string
			fs   FS
			dir  string
		}{
			{"OS", OS(), b.TempDir()},
			{"MemFS", NewMemFS(), "/"},
		} {
			b.Run(fmt.Sprintf("%s/sync=%v", u.name, sync), func(b *testing.B) {
				f, err := u.fs.Create(filepath.Join(u.dir, "seg"))
				require.NoError(b, err)
				defer f.Close()
				b.ReportAllocs()
				b.SetBytes(int64(len(buf)))
				for i := 0; b.Loop(); i++ {
					if i%4096 == 0 { // keep the file at most 16 MiB
						if err := f.Truncate(0); err != nil {
							b.Fatal(err)
						}
						if _, err := f.Seek(0, 0); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := f.Write(buf); err != nil {
						b.Fatal(err)
					}
					if sync {
						if err := f.Sync(); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// BenchmarkMemFSCrash measures Crash of a MemFS holding 100 synced 64 KiB
// files, the cost a crash-at-every-op test pays per crash point.
func BenchmarkMemFSCrash(b *testing.B) {
	m := NewMemFS()
	data := make([]byte, 64<<10)
	for i := range 100 {
		require.NoError(b, m.WriteFile(fmt.Sprintf("/f%03d", i), data, 0o644))
	}
	m.SyncAll()
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Crash()
	}
}

// BenchmarkMap measures mapping and unmapping a 1 MiB file.
func BenchmarkMap(b *testing.B) {
	data := make([]byte, 1<<20)
	for _, u := range []struct {
		name string
		fs   FS
		dir  string
	}{
		{"OS", OS(), b.TempDir()},
		{"MemFS", NewMemFS(), "/"},
	} {
		b.Run(u.name, func(b *testing.B) {
			name := filepath.Join(u.dir, "f")
			f, err := u.fs.Create(name)
			require.NoError(b, err)
			_, err = f.Write(data)
			require.NoError(b, err)
			require.NoError(b, f.Close())
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				m, err := u.fs.Map(name)
				if err != nil {
					b.Fatal(err)
				}
				if len(m.Bytes()) != len(data) {
					b.Fatal("short map")
				}
				if err := m.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
