package testenv

import (
	"errors"
	"runtime"
	"testing"
)

// Raises runs f and returns the error of type E it panics with. The test
// fails when f does not panic, panics with something that is not an error,
// with a Go runtime error (a nil dereference, makeslice, an index out of
// range: misuse must reach the user as a typed error), or with another
// error type.
func Raises[E error](t testing.TB, what string, f func()) E {
	t.Helper()
	var zero E
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				e, ok := r.(error)
				if !ok {
					t.Fatalf("%s: panicked with %T %v, want an error", what, r, r)
				}
				err = e
			}
		}()
		f()
	}()
	if err == nil {
		t.Fatalf("%s: did not panic", what)
		return zero
	}
	var re runtime.Error
	if errors.As(err, &re) {
		t.Fatalf("%s: Go runtime error %v", what, err)
	}
	var e E
	if !errors.As(err, &e) {
		t.Fatalf("%s: panicked with %T %v, want %T", what, err, err, zero)
	}
	return e
}
