package nn

import (
	"errors"
	"sort"
	"strings"

	"github.com/emberml/ember"
)

// wrapper is the part of DataParallel and DistributedDataParallel that
// hands every Module method but Forward and To to the wrapped module: names
// stay the wrapped module's (no "module." prefix).
type wrapper struct{ m Module }

// Module returns the wrapped module.
func (w wrapper) Module() Module { return w.m }

// Registry is the wrapped module's registry, so a wrapper inside another
// module adds no "module." level to names.
func (w wrapper) Registry() *Base { return w.m.Registry() }

// Parameters returns the wrapped module's parameters.
func (w wrapper) Parameters() []*ember.Tensor { return w.m.Parameters() }

// NamedParameters returns the wrapped module's parameters with its names.
func (w wrapper) NamedParameters() []Named { return w.m.NamedParameters() }

// Buffers returns the wrapped module's buffers.
func (w wrapper) Buffers() []*ember.Tensor { return w.m.Buffers() }

// NamedBuffers returns the wrapped module's buffers with its names.
func (w wrapper) NamedBuffers() []Named { return w.m.NamedBuffers() }

// StateDict is the wrapped module's state dict (keys without "module.").
func (w wrapper) StateDict() map[string]*ember.Tensor { return w.m.StateDict() }

// LoadStateDict loads sd into the wrapped module. Keys may be the module's
// own or carry the "module." prefix of torch's DataParallel and
// DistributedDataParallel checkpoints.
func (w wrapper) LoadStateDict(sd map[string]*ember.Tensor, strict bool) error {
	sd, err := stripModulePrefix(w.m, sd)
	if err != nil {
		return err
	}
	return w.m.LoadStateDict(sd, strict)
}

// stripModulePrefix removes "module." from the keys of sd that carry it
// and are not keys of m as they are.
func stripModulePrefix(m Module, sd map[string]*ember.Tensor) (map[string]*ember.Tensor, error) {
	own := m.StateDict()
	out := make(map[string]*ember.Tensor, len(sd))
	var dup []string
	for k, v := range sd {
		if _, ok := own[k]; !ok {
			if s, ok := strings.CutPrefix(k, "module."); ok {
				k = s
			}
		}
		if _, ok := out[k]; ok {
			dup = append(dup, k)
		}
		out[k] = v
	}
	if len(dup) > 0 {
		sort.Strings(dup)
		return nil, errors.New("nn: load state dict: keys given both with and without the \"module.\" prefix: " + strings.Join(dup, ", "))
	}
	return out, nil
}

// Train sets the wrapped module's mode.
func (w wrapper) Train(on bool) { w.m.Train(on) }

// Eval is Train(false).
func (w wrapper) Eval() { w.m.Eval() }

// Training reports the wrapped module's mode.
func (w wrapper) Training() bool { return w.m.Training() }
