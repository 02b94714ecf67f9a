package index

import (
	"fmt"
	"reflect"
	"testing"
)

// The tests use the standard library only; these helpers keep them short.

func noErr(t testing.TB, err error, msg ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%sunexpected error: %v", prefix(msg), err)
	}
}

func isTrue(t testing.TB, ok bool, msg ...any) {
	t.Helper()
	if !ok {
		t.Fatalf("%sexpected true", prefix(msg))
	}
}

func equal(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%snot equal:\nwant %v\n got %v", prefix(msg), want, got)
	}
}

func prefix(msg []any) string {
	if len(msg) == 0 {
		return ""
	}
	if f, ok := msg[0].(string); ok {
		return fmt.Sprintf(f, msg[1:]...) + ": "
	}
	return fmt.Sprint(msg...) + ": "
}
