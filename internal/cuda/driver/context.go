package driver

import (
	"fmt"
	"runtime"
	"sync"
)

// Context is a device's primary context together with the one OS thread
// where it is current. The driver's current context is a per-thread setting
// and goroutines migrate between threads, so every call that depends on the
// context is run through Do, on that thread.
type Context struct {
	d       *Driver
	Ordinal int       // the device ordinal
	Device  Device    // the CUdevice
	Handle  CtxHandle // the primary CUcontext

	work      chan job
	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

type job struct {
	f     func() error
	reply chan result
}

type result struct {
	err      error
	panicked bool
	pv       any
}

// PrimaryContext returns the Context of the device with the given ordinal,
// retaining its primary context and starting its worker thread on first use.
// It calls Init first. Later calls return the same *Context until Close.
func (d *Driver) PrimaryContext(ordinal int) (*Context, error) {
	if err := d.Init(); err != nil {
		return nil, err
	}
	d.ctxMu.Lock()
	defer d.ctxMu.Unlock()
	if c := d.contexts[ordinal]; c != nil {
		return c, nil
	}
	dev, err := d.DeviceGet(ordinal)
	if err != nil {
		return nil, err
	}
	h, err := d.DevicePrimaryCtxRetain(dev)
	if err != nil {
		return nil, err
	}
	c := &Context{d: d, Ordinal: ordinal, Device: dev, Handle: h}
	if err := c.start(func() error { return d.CtxSetCurrent(h) }); err != nil {
		_ = d.DevicePrimaryCtxRelease(dev)
		return nil, err
	}
	if d.contexts == nil {
		d.contexts = map[int]*Context{}
	}
	d.contexts[ordinal] = c
	return c, nil
}

// start launches the worker: a goroutine locked to its OS thread that runs
// setCurrent once and then every job sent to it.
func (c *Context) start(setCurrent func() error) error {
	c.work = make(chan job)
	c.quit = make(chan struct{})
	c.done = make(chan struct{})
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// The thread stays locked to the end: it exits with the goroutine,
		// so no other goroutine inherits its current context.
		defer close(c.done)
		if err := setCurrent(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for {
			select {
			case j := <-c.work:
				j.reply <- runJob(j.f)
			case <-c.quit:
				return
			}
		}
	}()
	return <-ready
}

func runJob(f func() error) (r result) {
	defer func() {
		if pv := recover(); pv != nil {
			r = result{panicked: true, pv: pv}
		}
	}()
	return result{err: f()}
}

// Do runs f on the context's thread, where the context is current, and
// returns its error. Calls from many goroutines are serialized. A panic in f
// is re-raised in the caller. f must not call Do on the same Context: it
// would wait for itself.
func (c *Context) Do(f func() error) error {
	reply := make(chan result, 1)
	select {
	case c.work <- job{f: f, reply: reply}:
	case <-c.quit:
		return errClosed
	}
	r := <-reply
	if r.panicked {
		panic(r.pv)
	}
	return r.err
}

// Driver returns the driver the context belongs to.
func (c *Context) Driver() *Driver { return c.d }

// String names the context, e.g. "cuda:0".
func (c *Context) String() string { return fmt.Sprintf("cuda:%d", c.Ordinal) }

// Close stops the worker thread and releases the primary context. It is
// meant for shutdown: every holder of this *Context sees it closed, and a
// later PrimaryContext for the device starts a fresh one.
func (c *Context) Close() error {
	c.closeOnce.Do(func() {
		close(c.quit)
		<-c.done
		if c.d == nil {
			return
		}
		c.d.ctxMu.Lock()
		if c.d.contexts[c.Ordinal] == c {
			delete(c.d.contexts, c.Ordinal)
		}
		c.d.ctxMu.Unlock()
		c.closeErr = c.d.DevicePrimaryCtxRelease(c.Device)
	})
	return c.closeErr
}
