package labels

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// must holds the test assertions. The module cannot build testify's
// dependencies (they are missing from go.sum), so the few assertions these
// tests need are written here; each stops the test on failure.
var must checks

type checks struct{}

func msg(args []any) string {
	if len(args) == 0 {
		return ""
	}
	if f, ok := args[0].(string); ok {
		return ": " + fmt.Sprintf(f, args[1:]...)
	}
	return ": " + fmt.Sprint(args...)
}

func (checks) Equal(t testing.TB, want, got any, args ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("not equal%s\nwant: %#v\ngot:  %#v", msg(args), want, got)
	}
}

func (checks) True(t testing.TB, cond bool, args ...any) {
	t.Helper()
	if !cond {
		t.Fatalf("want true%s", msg(args))
	}
}

func (checks) False(t testing.TB, cond bool, args ...any) {
	t.Helper()
	if cond {
		t.Fatalf("want false%s", msg(args))
	}
}

func (checks) NoError(t testing.TB, err error, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error%s: %v", msg(args), err)
	}
}

func (checks) ErrorIs(t testing.TB, err, target error, args ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v is not %v%s", err, target, msg(args))
	}
}

func (checks) Panics(t testing.TB, f func(), args ...any) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("did not panic%s", msg(args))
		}
	}()
	f()
}
