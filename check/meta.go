package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/oklog/ulid/v2"
)

// blockMeta is what the checker reads of a meta.json (Prometheus's
// BlockMeta, version 1). ULIDs are kept as strings so that a malformed one
// is reported as such rather than failing the whole parse.
type blockMeta struct {
	dir string // the block directory; not part of the file

	ULID    string `json:"ulid"`
	MinTime int64  `json:"minTime"`
	MaxTime int64  `json:"maxTime"`
	Stats   struct {
		NumSamples uint64 `json:"numSamples,omitempty"`
		// NumFloatSamples and NumHistogramSamples split NumSamples by
		// chunk encoding (XOR, or either histogram encoding). Writers
		// before native histograms omit both.
		NumFloatSamples     uint64 `json:"numFloatSamples,omitempty"`
		NumHistogramSamples uint64 `json:"numHistogramSamples,omitempty"`
		NumSeries           uint64 `json:"numSeries,omitempty"`
		NumChunks           uint64 `json:"numChunks,omitempty"`
		NumTombstones       uint64 `json:"numTombstones,omitempty"`
	} `json:"stats"`
	Compaction struct {
		Level   int      `json:"level"`
		Sources []string `json:"sources,omitempty"`
		Parents []struct {
			ULID    string `json:"ulid"`
			MinTime int64  `json:"minTime"`
			MaxTime int64  `json:"maxTime"`
		} `json:"parents,omitempty"`
	} `json:"compaction"`
	Version int `json:"version"`
}

// maxMetaSize bounds the meta.json the checker reads: a compacted block
// lists its sources, a few thousand at most.
const maxMetaSize = 16 << 20

// errMeta is wrapped by the errors of parseMeta.
var errMeta = errors.New("meta.json does not parse")

// parseMeta decodes the contents of a meta.json. On failure it also returns
// the byte offset of the fault when the JSON decoder knows it, else -1.
func parseMeta(b []byte) (blockMeta, int64, error) {
	var m blockMeta
	if len(b) > maxMetaSize {
		return m, -1, fmt.Errorf("%w: %d bytes is more than the %d allowed", errMeta, len(b), maxMetaSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		var (
			se *json.SyntaxError
			te *json.UnmarshalTypeError
		)
		off := int64(-1)
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			off = int64(len(b))
		}
		return m, off, fmt.Errorf("%w: %w", errMeta, err)
	}
	// Only white space may follow the object.
	if rest := bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		off := int64(len(b) - len(rest))
		return m, off, fmt.Errorf("%w: data after the JSON object", errMeta)
	}
	return m, -1, nil
}

// checkMeta reads and checks the meta.json of the block directory bdir,
// whose name is name. It returns the meta, whether it parsed, and whether
// its time range can be trusted for the other checks.
func (c *checker) checkMeta(bdir, name string) (m blockMeta, parsed, rangeOK bool) {
	path := filepath.Join(bdir, metaFilename)
	b, err := c.readSmallFile(path, maxMetaSize)
	if err != nil {
		c.rp.errorf(path, -1, "", err, "cannot read meta.json")
		return blockMeta{}, false, false
	}
	m, off, err := parseMeta(b)
	if err != nil {
		c.rp.errorf(path, off, "", err, "bad meta.json")
		return blockMeta{}, false, false
	}
	m.dir = bdir
	ok := true
	if m.Version != 1 {
		c.rp.errorf(path, -1, "", nil, "version %d, want 1", m.Version)
	}
	if m.MinTime >= m.MaxTime {
		c.rp.errorf(path, -1, "", nil, "empty or inverted time range [%d, %d)", m.MinTime, m.MaxTime)
		ok = false
	}
	switch id, err := ulid.ParseStrict(m.ULID); {
	case err != nil:
		c.rp.errorf(path, -1, "", err, "ulid %q is not a ULID", m.ULID)
	case id.String() != name:
		c.rp.errorf(path, -1, "", nil, "ulid %s differs from the directory name %s", id, name)
	}
	if m.Compaction.Level < 1 {
		c.rp.warnf(path, -1, "", nil, "compaction level %d, want at least 1", m.Compaction.Level)
	}
	for _, s := range m.Compaction.Sources {
		if _, err := ulid.ParseStrict(s); err != nil {
			c.rp.errorf(path, -1, "", err, "compaction source %q is not a ULID", s)
		}
	}
	for _, p := range m.Compaction.Parents {
		if _, err := ulid.ParseStrict(p.ULID); err != nil {
			c.rp.errorf(path, -1, "", err, "compaction parent %q is not a ULID", p.ULID)
		}
	}
	if ok {
		c.metas = append(c.metas, m)
	}
	return m, true, ok
}

// readSmallFile reads the whole file at path, refusing files larger than
// limit before allocating.
func (c *checker) readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := c.fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("file of %d bytes is larger than the %d allowed", st.Size(), limit)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}
