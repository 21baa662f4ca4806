package ember_test

import (
	"fmt"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/embertest"
)

// TestConformance runs the backend suite on every device this machine has.
func TestConformance(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { embertest.Run(t, ember.CPU) })
	t.Run("meta", func(t *testing.T) { embertest.RunShapes(t, ember.Meta) })
	n := ember.DeviceCount()
	if n == 0 {
		t.Run("cuda", func(t *testing.T) {
			t.Skipf("no CUDA device: %v", ember.CheckDevice(ember.CUDA(0)))
		})
	}
	for i := 0; i < n; i++ {
		dev := ember.CUDA(i)
		t.Run(dev.String(), func(t *testing.T) { embertest.Run(t, dev) })
	}
}

func TestParseDevice(t *testing.T) {
	for in, want := range map[string]ember.Device{
		"cpu": ember.CPU, " CPU ": ember.CPU, "meta": ember.Meta, "cuda": ember.CUDA(0),
		"cuda:0": ember.CUDA(0), "cuda:12": ember.CUDA(12), "cuda:32767": ember.CUDA(32767),
		// torch.device accepts an index on cpu and meta.
		"cpu:0": ember.CPU, "meta:0": ember.Meta,
	} {
		got, err := ember.ParseDevice(in)
		if err != nil || got != want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "gpu", "gpu:x", "cuda:", "cuda:-1", "cuda:+1", "cuda:x", "cuda:1:2",
		// torch.device rejects these: leading zeros, inner spaces, an index it
		// cannot hold (ember's CPU and meta have only index 0).
		"cuda:01", "cuda:00", "cuda: 1", "cuda :1", "cuda:0x1", "cuda:1_0", "cuda:999999999999", "cuda:32768",
		"cuda:99999999999999999999", "cpu:", "cpu:1", "meta:2", "cpu:00"} {
		if d, err := ember.ParseDevice(in); err == nil {
			t.Errorf("ParseDevice(%q) = %v, want an error", in, d)
		}
	}
	if s := ember.CUDA(3).String(); s != "cuda:3" {
		t.Errorf("CUDA(3) = %s", s)
	}
}

func TestCheckDevice(t *testing.T) {
	if err := ember.CheckDevice(ember.CPU); err != nil {
		t.Errorf("cpu: %v", err)
	}
	if err := ember.CheckDevice(ember.Meta); err != nil {
		t.Errorf("meta: %v", err)
	}
	var de *ember.DeviceError
	bad := ember.Device{Type: ember.CPUType, Index: 1}
	if err := ember.CheckDevice(bad); err == nil || !asDeviceError(err, &de) || de.Device != bad {
		t.Errorf("cpu index 1: %v", err)
	}
	n := ember.DeviceCount()
	if err := ember.CheckDevice(ember.CUDA(n)); err == nil {
		t.Errorf("cuda:%d with %d devices: no error", n, n)
	}
	// Using an absent device panics with the DeviceError.
	err := ember.Try(func() { ember.Zeros(ember.Shape{2}, ember.On(ember.CUDA(n))) })
	if !asDeviceError(err, &de) {
		t.Errorf("Zeros on cuda:%d: %v, want *DeviceError", n, err)
	}
	if got := ember.TryGPU(n); got != ember.CPU {
		t.Errorf("TryGPU(%d) = %v, want cpu", n, got)
	}
	if ds := ember.TryAllGPUs(); n == 0 && (len(ds) != 1 || ds[0] != ember.CPU) {
		t.Errorf("TryAllGPUs = %v", ds)
	}
}

func asDeviceError(err error, de **ember.DeviceError) bool {
	e, ok := err.(*ember.DeviceError)
	if ok {
		*de = e
	}
	return ok
}

func TestMetaPrint(t *testing.T) {
	x := ember.Zeros(ember.Shape{2, 3}, ember.On(ember.Meta))
	if s := x.String(); s != "tensor(..., device='meta', size=(2, 3))" {
		t.Errorf("got %s", s)
	}
	y := ember.Zeros(ember.Shape{4}, ember.On(ember.Meta), ember.Dtype(ember.Int64))
	if s := y.String(); s != "tensor(..., device='meta', size=(4,), dtype=torch.int64)" {
		t.Errorf("got %s", s)
	}
}

func TestReleased(t *testing.T) {
	x := ember.Ones(ember.Shape{3})
	v := x.Reshape(3, 1)
	x.Release()
	err := ember.Try(func() { v.Sum() })
	if _, ok := err.(*ember.ReleasedError); !ok {
		t.Errorf("Sum of a released view: %v", err)
	}
	if s := fmt.Sprint(x); s != "tensor(<released>)" {
		t.Errorf("String: %s", s)
	}
}
