package ember

import "sync"

// Go's garbage collector does not see GPU memory, so waiting for it to free
// a loop's temporaries can exhaust a device long before the Go heap feels
// any pressure. Scope frees them at once.

type scope struct {
	mu       sync.Mutex
	storages []*storage
	kept     map[*storage]bool
}

// scopes is each goroutine's stack of Scopes, innermost last.
var scopes local[[]*scope]

// Scope runs f and then releases every tensor created inside it, except
// those passed to Keep (and their views). Scopes nest: a kept tensor belongs
// to the enclosing scope. Finish any Backward that needs the scope's
// intermediates inside it. A scope belongs to the calling goroutine, like
// NoGrad: tensors that other goroutines create meanwhile (including
// goroutines f starts) are not its own and are not released.
func Scope(f func()) {
	s := &scope{kept: map[*storage]bool{}}
	stack, _ := scopes.get()
	var parent *scope
	if n := len(stack); n > 0 {
		parent = stack[n-1]
	}
	defer func() {
		s.mu.Lock()
		storages, kept := s.storages, s.kept
		s.mu.Unlock()
		for _, st := range storages {
			if kept[st] {
				if parent != nil {
					parent.add(st)
				}
				continue
			}
			if st.released.CompareAndSwap(false, true) {
				st.s.Release()
				untrack(st.id)
			}
		}
	}()
	scopes.with("scope", append(stack[:len(stack):len(stack)], s), f)
}

// Keep exempts tensors from the calling goroutine's innermost Scope's
// release and returns the first.
func Keep(ts ...*Tensor) *Tensor {
	if stack, _ := scopes.get(); len(stack) > 0 {
		s := stack[len(stack)-1]
		s.mu.Lock()
		for _, t := range ts {
			if t != nil {
				s.kept[t.st] = true
			}
		}
		s.mu.Unlock()
	}
	if len(ts) == 0 {
		return nil
	}
	return ts[0]
}

// unscoped removes t's storage from the calling goroutine's scopes, so no
// Scope releases it (a deferred check outlives the scope that queued it).
func unscoped(t *Tensor) {
	stack, _ := scopes.get()
	for i := len(stack) - 1; i >= 0; i-- {
		s := stack[i]
		s.mu.Lock()
		for j := len(s.storages) - 1; j >= 0; j-- {
			if s.storages[j] == t.st {
				s.storages = append(s.storages[:j], s.storages[j+1:]...)
				break
			}
		}
		s.mu.Unlock()
	}
}

func (s *scope) add(st *storage) {
	s.mu.Lock()
	s.storages = append(s.storages, st)
	s.mu.Unlock()
}

// inScope records a new storage in the calling goroutine's innermost scope, if any.
func inScope(st *storage) {
	if stack, _ := scopes.get(); len(stack) > 0 {
		stack[len(stack)-1].add(st)
	}
}
