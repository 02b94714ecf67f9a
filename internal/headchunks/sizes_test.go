package headchunks

import (
	"errors"
	"reflect"
)

var errInjected = errors.New("injected fault")

// sizeOf returns the size of the object p points to.
func sizeOf(p any) uintptr { return reflect.TypeOf(p).Elem().Size() }
