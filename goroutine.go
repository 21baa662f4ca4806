package ember

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Grad mode, Scope and WithStream are per goroutine, as PyTorch's grad mode
// is per thread: NoGrad(f) affects the ops f runs on the calling goroutine,
// and nothing that other goroutines do meanwhile. Go has no goroutine-local
// storage, so the settings live in maps keyed by the goroutine's id, which
// exist only while some call is inside NoGrad, EnableGrad, Scope or
// WithStream: when none is (the common case) asking costs one atomic load.
// A goroutine started inside NoGrad starts with grad mode on, as a new
// Python thread does; code that fans work out to goroutines passes the
// mode on explicitly (SetGradEnabled(IsGradEnabled(), ...) in the
// goroutine), as DataParallel does.

// goid returns the calling goroutine's id, read from the first line of its
// stack trace ("goroutine 18 [running]:"). Ids are never reused while the
// process runs.
func goid() uint64 {
	var buf [40]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// local is a value per goroutine, set for the duration of a call.
type local[T any] struct {
	n  atomic.Int32 // goroutines with a value
	mu sync.RWMutex
	m  map[uint64]T
}

// get returns the calling goroutine's value, if it has one.
func (l *local[T]) get() (T, bool) {
	var v T
	if l.n.Load() == 0 {
		return v, false
	}
	id := gid()
	l.mu.RLock()
	v, ok := l.m[id]
	l.mu.RUnlock()
	return v, ok
}

// with runs f with v as the calling goroutine's value and then restores the
// previous one (or none), also when f panics. A nil f is a *ValueError
// naming op.
func (l *local[T]) with(op string, v T, f func()) {
	mustFunc(op, f)
	id := gid()
	l.mu.Lock()
	if l.m == nil {
		l.m = map[uint64]T{}
	}
	prev, had := l.m[id]
	l.m[id] = v
	l.mu.Unlock()
	if !had {
		l.n.Add(1)
	}
	defer func() {
		l.mu.Lock()
		if had {
			l.m[id] = prev
		} else {
			delete(l.m, id)
		}
		l.mu.Unlock()
		if !had {
			l.n.Add(-1)
		}
	}()
	f()
}

// mustFunc panics with a *ValueError naming op when f is nil (a nil func
// given to NoGrad, Autocast, Scope and the like).
func mustFunc(op string, f func()) {
	if f == nil {
		panic(&ValueError{Op: op, Msg: "nil function"})
	}
}
