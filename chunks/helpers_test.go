package chunks

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// Small assertion helpers: testify cannot be built in this module yet
// (go.sum lacks its dependencies), and these keep failures readable.

func mustAppender(t testing.TB, c Chunk) Appender {
	t.Helper()
	app, err := c.Appender()
	if err != nil {
		t.Fatalf("Appender: %v", err)
	}
	return app
}

func requireBytes(t testing.TB, want, got []byte) {
	t.Helper()
	if !bytes.Equal(want, got) {
		t.Fatalf("bytes differ\nwant % X\ngot  % X", want, got)
	}
}

func requireCorrupt(t testing.TB, err error) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want error wrapping ErrCorrupt, got %v", err)
	}
	// The chunk-level error knows no file; a segment reader's error wraps
	// it in one that does.
	var ce *corrupt.Error
	for e := err; errors.As(e, &ce); e = ce.Err {
		if ce.File == "" {
			return
		}
	}
	t.Fatalf("want a *corrupt.Error without a file, got %T: %v", err, err)
}

// testSample is a sample with its value as raw bits, so that comparisons
// see NaN payloads and signed zeros.
type testSample struct {
	t int64
	v uint64
}

func (s testSample) String() string {
	return fmt.Sprintf("(%d, %#x=%g)", s.t, s.v, math.Float64frombits(s.v))
}

func appendAll(app Appender, ss []testSample) {
	for _, s := range ss {
		app.Append(s.t, math.Float64frombits(s.v))
	}
}

func encode(t testing.TB, ss []testSample) *XORChunk {
	t.Helper()
	c := NewXORChunk()
	appendAll(mustAppender(t, c), ss)
	return c
}

// collect drains it, failing the test on an iteration error.
func collect(t testing.TB, it Iterator) []testSample {
	t.Helper()
	var out []testSample
	for it.Next() {
		ts, v := it.At()
		out = append(out, testSample{ts, math.Float64bits(v)})
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iteration error after %d samples: %v", len(out), err)
	}
	return out
}

func requireSamples(t testing.TB, want, got []testSample) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("got %d samples, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("sample %d: got %v, want %v", i, got[i], want[i])
		}
	}
}
