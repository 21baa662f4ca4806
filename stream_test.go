package ember

import "testing"

func TestStreamOnCPU(t *testing.T) {
	s, err := NewStream(CPU)
	if err != nil {
		t.Fatal(err)
	}
	var y *Tensor
	WithStream(s, func() { y = Ones(Shape{3}).MulScalar(2).Sum() })
	if err := s.Synchronize(); err != nil || y.Item() != 6 {
		t.Fatalf("got %v, %v", y.Item(), err)
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStream(CUDA(7)); err == nil && DeviceCount() < 8 {
		t.Fatal("NewStream on an absent device must fail")
	}
}

func TestPinMemoryNeedsCUDA(t *testing.T) {
	if CUDAAvailable() {
		t.Skip("a GPU is present")
	}
	if _, err := Ones(Shape{2}).PinMemory(); err == nil {
		t.Fatal("pinning without a CUDA device must fail, as in PyTorch")
	}
}
