// Package dl is what every NVIDIA binding (driver, NVRTC, cuBLAS, NVML,
// NCCL) shares about loading a shared library at run time and binding its
// symbols safely, without cgo:
//
//   - Library opens a library once per process through libpath's search
//     order and builds the binding on it, remembering the result (or, with
//     Retry, only a success). A library that is not found is a
//     *libpath.NotFoundError naming the files asked for and every folder
//     searched.
//   - Table resolves a binding's C functions with dlsym (never
//     purego.RegisterLibFunc, which panics on a missing symbol), lazily or
//     all at once, and says which are missing and how many resolved.
//   - Codes names a library's status codes, and Error is the one error type
//     of a failed call: the function, the code and its name.
//
// Each binding keeps only its own functions, its own table of codes and the
// calls that ask the library to describe a code.
package dl

import (
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/internal/cuda/libpath"
)

// Library is a shared library that a binding opens on first use. Set the
// exported fields in a package-level variable and call Load; the zero value
// of the other fields is ready to use. A Library must not be copied after
// first use.
type Library[T any] struct {
	// Names are the files asked of libpath, in order; a name may be a glob
	// ("libnvrtc.so.*").
	Names []string
	// Newest prefers the highest version across all folders of the search
	// order (libpath.OpenNewest) over the first folder that has one.
	Newest bool
	// Retry forgets a failure, so that a later Load searches again (after
	// the environment changed); a success is still kept.
	Retry bool
	// Bind builds the binding on the opened library: it resolves the
	// functions nothing works without and asks the library what it needs.
	// Its error is Load's.
	Bind func(*libpath.Lib) (T, error)

	mu   sync.Mutex
	done atomic.Bool
	val  T
	err  error
}

// Load opens the library and binds it on the first call, and returns the
// same result on every later one (with Retry, until one succeeds). It is
// safe for concurrent use; once loaded it takes no lock.
func (l *Library[T]) Load() (T, error) {
	if l.done.Load() {
		return l.val, l.err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done.Load() {
		return l.val, l.err
	}
	v, err := l.Open()
	if err != nil && l.Retry {
		var zero T
		return zero, err
	}
	l.val, l.err = v, err
	l.done.Store(true)
	return v, err
}

// Open searches for the library, opens it and binds it, every time: Load is
// Open done once. It is for tests that open a library under another name.
func (l *Library[T]) Open() (T, error) {
	var zero T
	open := libpath.Open
	if l.Newest {
		open = libpath.OpenNewest
	}
	lib, err := open(l.Names...)
	if err != nil {
		return zero, err
	}
	return l.Bind(lib)
}

// Reset forgets what Load found, so that the next Load searches again. It
// is for tests that point the search order elsewhere; a binding already
// handed out stays valid.
func (l *Library[T]) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	var zero T
	l.val, l.err = zero, nil
	l.done.Store(false)
}
