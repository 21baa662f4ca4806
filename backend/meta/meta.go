// Package meta is the backend of the meta device: tensors with a shape and a
// dtype but no data, as in PyTorch, so shape logic and the same-device rule
// can run anywhere. Kernels do nothing; reading data is an error.
package meta

import (
	"errors"

	"github.com/emberml/ember/backend"
)

// Backend is the meta backend.
type Backend struct{}

func init() { backend.Register(Backend{}) }

type storage struct {
	dt backend.DType
	n  int
}

func (s *storage) Device() backend.Device { return backend.Device{Type: backend.MetaType} }
func (s *storage) DType() backend.DType   { return s.dt }
func (s *storage) Len() int               { return s.n }
func (s *storage) Release()               {}

// Type is meta.
func (Backend) Type() backend.DeviceType { return backend.MetaType }

// Check accepts meta.
func (Backend) Check(dev backend.Device) error { return nil }

// Count is 1.
func (Backend) Count() (int, error) { return 1, nil }

// Alloc records the size only.
func (Backend) Alloc(_ backend.Device, dt backend.DType, n int) (backend.Storage, error) {
	return &storage{dt: dt, n: n}, nil
}

// FromHost keeps the dtype and length and drops the data.
func (Backend) FromHost(_ backend.Device, data any) (backend.Storage, error) {
	switch d := data.(type) {
	case []float32:
		return &storage{backend.Float32, len(d)}, nil
	case []float64:
		return &storage{backend.Float64, len(d)}, nil
	case []int64:
		return &storage{backend.Int64, len(d)}, nil
	case []int32:
		return &storage{backend.Int32, len(d)}, nil
	case []bool:
		return &storage{backend.Bool, len(d)}, nil
	case []backend.BF16:
		return &storage{backend.BFloat16, len(d)}, nil
	case []backend.F16:
		return &storage{backend.Float16, len(d)}, nil
	}
	return nil, errors.New("meta: unsupported host data")
}

// ToHost fails: there is no data.
func (Backend) ToHost(backend.Storage, any) error { return backend.ErrNoData }

// Synchronize has nothing to wait for.
func (Backend) Synchronize(backend.Device) error { return nil }

func (Backend) Fill(backend.View, float64)                                        {}
func (Backend) Copy(_, _ backend.View)                                            {}
func (Backend) Unary(backend.UnaryOp, backend.View, backend.View, backend.Params) {}
func (Backend) Binary(backend.BinaryOp, backend.View, backend.View, backend.View) {}
func (Backend) Where(_, _, _, _ backend.View)                                     {}
func (Backend) Reduce(backend.ReduceOp, backend.View, backend.View)               {}
func (Backend) MatMul(_, _, _ backend.View)                                       {}
func (Backend) Softmax(_, _ backend.View, _ bool)                                 {}
func (Backend) Arange(backend.View, float64, float64)                             {}
func (Backend) Random(backend.View, uint64, uint64, bool)                         {}
