package ember_test

import (
	"errors"
	"fmt"

	"github.com/emberml/ember"
)

// Devices are small values: describing one never touches a driver.
func ExampleParseDevice() {
	fmt.Println(ember.CPU, ember.CUDA(3), ember.Meta)
	d, err := ember.ParseDevice("cuda:1")
	fmt.Println(d, err)
	_, err = ember.ParseDevice("gpu:x")
	fmt.Println(err)
	// Output:
	// cpu cuda:3 meta
	// cuda:1 <nil>
	// invalid device string "gpu:x": expected one of cpu, cuda, cuda:N (N from 0 to 32767, no leading zeros), meta
}

// Tensors are created on a device; To copies between devices and returns
// the tensor itself when it is already there.
func ExampleTensor_To() {
	x := ember.FromSlice([]float32{1, 2, 3}, nil, ember.On(ember.CPU))
	m := x.To(ember.Meta) // shape and dtype, no data
	fmt.Println(m.Device(), m.Shape(), m.DType())
	fmt.Println(x.To(ember.CPU) == x)
	fmt.Println(m)
	// A meta tensor has no data to copy back, as in PyTorch.
	err := ember.Try(func() { m.CPU() })
	fmt.Println(errors.Is(err, ember.ErrNoData), err)
	// Output:
	// meta [3] float32
	// true
	// tensor(..., device='meta', size=(3,))
	// true to: meta tensors have no data
}

// Ops need all their operands on one device.
func ExampleDeviceMismatchError() {
	a := ember.Ones(ember.Shape{2}, ember.On(ember.Meta))
	b := ember.Ones(ember.Shape{2})
	err := ember.Try(func() { a.Mul(b) })
	fmt.Println(err)
	var dm *ember.DeviceMismatchError
	fmt.Println(errors.As(err, &dm), dm.Op)
	// Output:
	// Expected all tensors to be on the same device, but found at least two devices, meta and cpu! (op: mul)
	// true mul
}

// TryGPU picks cuda:0 when there is one and falls back to the CPU otherwise,
// so the same code runs on any machine.
func ExampleTryGPU() {
	dev := ember.TryGPU(0)
	x := ember.Ones(ember.Shape{2, 3}, ember.On(dev))
	y := x.MulScalar(2).AddScalar(1)
	fmt.Println(y.Device().Type == ember.CUDAType || y.Device() == ember.CPU)
	fmt.Println(y.CPU())
	// Output:
	// true
	// tensor([[3., 3., 3.],
	//         [3., 3., 3.]])
}

func ExampleTensor_MatMul() {
	a := ember.FromSlice([]float32{1, 2, 3, 4, 5, 6}, ember.Shape{2, 3})
	b := ember.FromSlice([]float32{1, 0, 0, 1, 1, 1}, ember.Shape{3, 2})
	fmt.Println(a.MatMul(b))
	v := ember.FromSlice([]float32{1, 1, 1}, nil)
	fmt.Println(a.MatMul(v), v.MatMul(v))
	// Output:
	// tensor([[ 4.,  5.],
	//         [10., 11.]])
	// tensor([ 6., 15.]) tensor(3.)
}

func ExampleTensor_Sum() {
	x := ember.Arange(0, 6, 1).Reshape(2, 3)
	fmt.Println(x)
	fmt.Println(x.Sum())
	fmt.Println(x.Sum(ember.Dims(0)))
	fmt.Println(x.Sum(ember.Dims(-1), ember.KeepDim()))
	f := x.Cast(ember.Float32)
	fmt.Println(f.Mean(ember.Dims(1)), f.Max(), x.ArgMaxDim(1, false))
	// Output:
	// tensor([[0, 1, 2],
	//         [3, 4, 5]])
	// tensor(15)
	// tensor([3, 5, 7])
	// tensor([[ 3],
	//         [12]])
	// tensor([1., 4.]) tensor(5.) tensor([2, 2])
}

// Tensors print as PyTorch prints them.
func ExampleTensor_String() {
	fmt.Println(ember.FromSlice([]float32{1.5, 0.25, -3}, nil))
	fmt.Println(ember.FromSlice([]float64{1, 2}, nil))
	fmt.Println(ember.FromSlice([]float32{1e-5, 1}, nil))
	fmt.Println(ember.FromSlice([]bool{true, false}, nil))
	fmt.Println(ember.FromSlice([]int32{7}, ember.Shape{}))
	fmt.Println(ember.Zeros(ember.Shape{2, 0}))
	// Output:
	// tensor([ 1.5000,  0.2500, -3.0000])
	// tensor([1., 2.], dtype=torch.float64)
	// tensor([1.0000e-05, 1.0000e+00])
	// tensor([ True, False])
	// tensor(7, dtype=torch.int32)
	// tensor([], size=(2, 0))
}

// A post-accumulate-grad hook runs once a leaf's gradient for the pass is
// in Grad; QueueCallback, called from a hook, runs when the pass ends.
// Here out = x·w1·w2 with x = 2, w1 = 3, w2 = 5: w2's gradient (x·w1 = 6)
// is ready before w1's (x·w2 = 10).
func ExampleTensor_RegisterPostAccumulateGradHook() {
	x := ember.Scalar(2)
	w1 := ember.Scalar(3).SetRequiresGrad(true)
	w2 := ember.Scalar(5).SetRequiresGrad(true)
	for name, w := range map[string]*ember.Tensor{"w1": w1, "w2": w2} {
		w.RegisterPostAccumulateGradHook(func(p *ember.Tensor) {
			fmt.Println(name, "grad", p.Grad().Item())
			if name == "w2" {
				ember.QueueCallback(func() { fmt.Println("backward done") })
			}
		})
	}
	x.Mul(w1).Mul(w2).Backward()
	// Output:
	// w2 grad 6
	// w1 grad 10
	// backward done
}
