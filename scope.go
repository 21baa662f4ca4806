package ember

import "sync"

// Go's garbage collector does not see GPU memory, so waiting for it to free
// a loop's temporaries can exhaust a device long before the Go heap feels
// any pressure. Scope frees them at once.

type scope struct {
	storages []*storage
	kept     map[*storage]bool
}

var scopes struct {
	sync.Mutex
	stack []*scope
}

// Scope runs f and then releases every tensor created inside it, except
// those passed to Keep (and their views). Scopes nest: a kept tensor belongs
// to the enclosing scope. Finish any Backward that needs the scope's
// intermediates inside it. The scope stack is process-wide, like NoGrad:
// tensors other goroutines create meanwhile belong to it too.
func Scope(f func()) {
	s := &scope{kept: map[*storage]bool{}}
	scopes.Lock()
	scopes.stack = append(scopes.stack, s)
	scopes.Unlock()
	defer func() {
		scopes.Lock()
		scopes.stack = scopes.stack[:len(scopes.stack)-1]
		var parent *scope
		if n := len(scopes.stack); n > 0 {
			parent = scopes.stack[n-1]
		}
		scopes.Unlock()
		for _, st := range s.storages {
			if s.kept[st] {
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
	f()
}

// Keep exempts tensors from the innermost Scope's release and returns the first.
func Keep(ts ...*Tensor) *Tensor {
	scopes.Lock()
	defer scopes.Unlock()
	if n := len(scopes.stack); n > 0 {
		for _, t := range ts {
			if t != nil {
				scopes.stack[n-1].kept[t.st] = true
			}
		}
	}
	if len(ts) == 0 {
		return nil
	}
	return ts[0]
}

func (s *scope) add(st *storage) {
	scopes.Lock()
	s.storages = append(s.storages, st)
	scopes.Unlock()
}

// inScope records a new storage in the innermost scope, if any.
func inScope(st *storage) {
	scopes.Lock()
	if n := len(scopes.stack); n > 0 {
		s := scopes.stack[n-1]
		s.storages = append(s.storages, st)
	}
	scopes.Unlock()
}
