package nn

import (
	"fmt"
	"strings"

	"github.com/emberml/ember"
)

// Pad is one of PyTorch's padding layers (ReflectionPad1d/2d/3d,
// ReplicationPad1d/2d/3d, ZeroPad2d, ConstantPad1d/2d/3d): Forward is
// F.pad(x, Padding, Mode, Value). Padding lists (before, after) pairs from
// the last dim backwards, (left, right, top, bottom, front, back), as
// PyTorch stores it; Mode is "constant", "reflect" or "replicate".
type Pad struct {
	stateless
	Padding []int
	Mode    string
	Value   float64 // the constant modes' fill
	name    string
}

// newPad builds a name layer padding k dims: pad is one size for every
// side, as PyTorch's int, or the 2k sizes of its tuple.
func newPad(name, mode string, k int, value float64, pad []int) *Pad {
	var p []int
	switch len(pad) {
	case 1:
		for i := 0; i < 2*k; i++ {
			p = append(p, pad[0])
		}
	case 2 * k:
		p = append(p, pad...)
	default:
		argErr("New"+name, "padding must be one int or %d ints, got %d", 2*k, len(pad))
	}
	l := &Pad{Padding: p, Mode: mode, Value: value, name: name}
	l.Init(l)
	return l
}

// NewReflectionPad1d is nn.ReflectionPad1d(padding): pad is one size for
// both sides or (left, right); the input is [C, W] or [N, C, W], each pad
// less than W.
func NewReflectionPad1d(pad ...int) *Pad { return newPad("ReflectionPad1d", "reflect", 1, 0, pad) }

// NewReflectionPad2d is nn.ReflectionPad2d(padding): one size or (left,
// right, top, bottom), of [C, H, W] or [N, C, H, W] inputs.
func NewReflectionPad2d(pad ...int) *Pad { return newPad("ReflectionPad2d", "reflect", 2, 0, pad) }

// NewReflectionPad3d is nn.ReflectionPad3d(padding): one size or (left,
// right, top, bottom, front, back), of [C, D, H, W] or [N, C, D, H, W]
// inputs.
func NewReflectionPad3d(pad ...int) *Pad { return newPad("ReflectionPad3d", "reflect", 3, 0, pad) }

// NewReplicationPad1d is nn.ReplicationPad1d(padding): the edge element
// repeated; one size or (left, right).
func NewReplicationPad1d(pad ...int) *Pad {
	return newPad("ReplicationPad1d", "replicate", 1, 0, pad)
}

// NewReplicationPad2d is nn.ReplicationPad2d(padding): one size or (left,
// right, top, bottom).
func NewReplicationPad2d(pad ...int) *Pad {
	return newPad("ReplicationPad2d", "replicate", 2, 0, pad)
}

// NewReplicationPad3d is nn.ReplicationPad3d(padding): one size or (left,
// right, top, bottom, front, back).
func NewReplicationPad3d(pad ...int) *Pad {
	return newPad("ReplicationPad3d", "replicate", 3, 0, pad)
}

// NewZeroPad2d is nn.ZeroPad2d(padding): zeros, one size or (left, right,
// top, bottom), of inputs of any rank from 2.
func NewZeroPad2d(pad ...int) *Pad { return newPad("ZeroPad2d", "constant", 2, 0, pad) }

// NewConstantPad1d is nn.ConstantPad1d(padding, value) (value first here,
// the sizes after it): one size or (left, right).
func NewConstantPad1d(value float64, pad ...int) *Pad {
	return newPad("ConstantPad1d", "constant", 1, value, pad)
}

// NewConstantPad2d is nn.ConstantPad2d(padding, value): one size or
// (left, right, top, bottom).
func NewConstantPad2d(value float64, pad ...int) *Pad {
	return newPad("ConstantPad2d", "constant", 2, value, pad)
}

// NewConstantPad3d is nn.ConstantPad3d(padding, value): one size or
// (left, right, top, bottom, front, back).
func NewConstantPad3d(value float64, pad ...int) *Pad {
	return newPad("ConstantPad3d", "constant", 3, value, pad)
}

// Forward pads x (ember.Pad for the constant modes, ember.PadMode for
// the others).
func (p *Pad) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(p, "Forward")
	if p.Mode == "constant" {
		return ember.Pad(x, p.Padding, p.Value)
	}
	return ember.PadMode(x, p.Padding, p.Mode)
}

func (p *Pad) moduleName() string {
	if p.name == "" {
		return "Pad"
	}
	return p.name
}

// ExtraRepr is the padding tuple, as PyTorch prints it ("padding=(1, 1),
// value=0.5" for the ConstantPad layers).
func (p *Pad) ExtraRepr() string {
	CheckNil(p, "ExtraRepr")
	t := pyTuple(p.Padding...)
	if strings.HasPrefix(p.name, "ConstantPad") {
		return fmt.Sprintf("padding=%s, value=%s", t, pyFloat(p.Value))
	}
	return t
}
