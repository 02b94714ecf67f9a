package cli

import (
	"bytes"
	"compress/gzip"
	_ "embed" // for the built-in series corpus
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// builtinSeries is testdata/20kseries.json of the repository, gzipped (about
// 2.2 MiB instead of 10 MiB), so that "tsdb bench write" needs no file and
// works from any directory. TestBuiltinSeriesIsTestdata keeps the two
// identical; after a change to the corpus, regenerate the copy with
//
//	gzip -9 -n -c testdata/20kseries.json > cmd/tsdb/cli/data/20kseries.json.gz
//
//go:embed data/20kseries.json.gz
var builtinSeries []byte

// builtinSeriesName is how messages name the built-in corpus.
const builtinSeriesName = "built-in 20kseries.json"

// openSeries opens the label-set file at path, or the built-in corpus if
// path is "". The caller closes the reader. name is what error messages
// call the source: "series file PATH" or builtinSeriesName.
func openSeries(path string) (r io.ReadCloser, name string, err error) {
	if path == "" {
		zr, err := gzip.NewReader(bytes.NewReader(builtinSeries))
		if err != nil {
			return nil, builtinSeriesName, fmt.Errorf("%s: %w", builtinSeriesName, err)
		}
		return zr, builtinSeriesName, nil
	}
	name = "series file " + path
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, name, fmt.Errorf("series file %s does not exist (leave out --series-file for the built-in corpus): %w", path, err)
	}
	if err != nil {
		return nil, name, fmt.Errorf("open series file: %w", err)
	}
	return f, name, nil
}
