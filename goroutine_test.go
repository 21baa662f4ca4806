package ember

import (
	"sync"
	"testing"
)

func TestGoroutineIdentity(t *testing.T) {
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := gid()
			<-start // all 20 alive at once: their ids must differ
			if b := gid(); a != b || a == 0 {
				panic("gid is not stable within a goroutine")
			}
			mu.Lock()
			seen[a] = true
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if len(seen) != 20 {
		t.Fatalf("%d distinct ids for 20 live goroutines", len(seen))
	}
}

func TestGradModePerGoroutine(t *testing.T) {
	w := Ones(Shape{3}).SetRequiresGrad(true)
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan bool)
	go func() {
		NoGrad(func() {
			close(inside)
			<-release
			done <- w.MulScalar(2).RequiresGrad()
		})
	}()
	<-inside // the other goroutine is inside NoGrad now
	if !IsGradEnabled() || !w.MulScalar(2).RequiresGrad() {
		t.Fatal("another goroutine's NoGrad stopped recording here")
	}
	close(release)
	if <-done {
		t.Fatal("NoGrad recorded a graph")
	}
	// nesting, EnableGrad, SetGradEnabled, and a goroutine started inside NoGrad
	NoGrad(func() {
		EnableGrad(func() {
			if !w.MulScalar(2).RequiresGrad() {
				t.Error("EnableGrad inside NoGrad recorded nothing")
			}
		})
		if IsGradEnabled() {
			t.Error("grad mode not restored after EnableGrad")
		}
		ch := make(chan [2]bool)
		on := IsGradEnabled()
		go func() {
			var passed bool
			SetGradEnabled(on, func() { passed = IsGradEnabled() })
			ch <- [2]bool{IsGradEnabled(), passed}
		}()
		if got := <-ch; !got[0] || got[1] {
			t.Errorf("new goroutine: grad %v (want true, as a new thread), with the mode passed on %v (want false)", got[0], got[1])
		}
	})
	if !IsGradEnabled() {
		t.Fatal("grad mode not restored after NoGrad")
	}
	func() {
		defer func() { recover() }()
		NoGrad(func() { panic("x") })
	}()
	if !IsGradEnabled() {
		t.Fatal("grad mode not restored after a panic inside NoGrad")
	}
}

func TestScopePerGoroutine(t *testing.T) {
	inside, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		Scope(func() {
			close(inside)
			<-release
		})
		close(done)
	}()
	<-inside
	mine := Ones(Shape{4}).MulScalar(3) // made while another goroutine is in a Scope
	close(release)
	<-done
	var got float64
	if err := Try(func() { got = mine.Sum().Item() }); err != nil || got != 12 {
		t.Fatalf("sum = %v, %v; want 12 (another goroutine's Scope must not release this goroutine's tensor)", got, err)
	}
}
