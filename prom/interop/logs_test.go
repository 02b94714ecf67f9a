package interop

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// logCapture is a slog.Handler that keeps the records at or above a level,
// so that a test can require that a reader had nothing to warn about. It is
// safe for concurrent use; handlers derived with WithAttrs or WithGroup
// share its store.
type logCapture struct {
	min    slog.Level
	prefix string // attributes and groups added with WithAttrs/WithGroup
	store  *logStore
}

type logStore struct {
	mu    sync.Mutex // protects lines
	lines []string
}

// newLogCapture returns a logger that keeps records at min and above, and
// its handler.
func newLogCapture(min slog.Level) (*slog.Logger, *logCapture) {
	h := &logCapture{min: min, store: &logStore{}}
	return slog.New(h), h
}

func (h *logCapture) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s%s", r.Level, r.Message, h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s", a)
		return true
	})
	h.store.mu.Lock()
	h.store.lines = append(h.store.lines, b.String())
	h.store.mu.Unlock()
	return nil
}

func (h *logCapture) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	for _, a := range as {
		c.prefix += " " + a.String()
	}
	return &c
}

func (h *logCapture) WithGroup(name string) slog.Handler {
	c := *h
	c.prefix += " [" + name + "]"
	return &c
}

// take returns the records kept so far and forgets them.
func (h *logCapture) take() []string {
	h.store.mu.Lock()
	defer h.store.mu.Unlock()
	out := h.store.lines
	h.store.lines = nil
	return out
}

// requireQuiet fails if the logger received records since the last call.
func (h *logCapture) requireQuiet(t *testing.T, who string) {
	t.Helper()
	lines := h.take()
	require.Empty(t, lines, "%s logged %d warnings or errors:\n%s", who, len(lines), strings.Join(lines, "\n"))
}
