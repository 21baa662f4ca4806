// Package hf reads the parts of a Hugging Face model folder that the
// models share: config.json, and the weights in one of the layouts
// save_pretrained writes (model.safetensors, a sharded
// model.safetensors.index.json, or pytorch_model.bin and its sharded
// index), and checks each tensor's shape against the model's before any
// is used.
package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/weights"
)

// ReadConfig reads dir/config.json into v (a struct with json tags) and
// returns the names of the fields it has, so callers can tell a missing
// field from a zero one.
func ReadConfig(dir string, v any) (map[string]json.RawMessage, error) {
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for k, m := range raw {
		if string(m) == "null" {
			delete(raw, k)
		}
	}
	return raw, nil
}

// Require returns an error naming the first of names that raw lacks.
func Require(path string, raw map[string]json.RawMessage, names ...string) error {
	var missing []string
	for _, n := range names {
		if _, ok := raw[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: missing %s", path, strings.Join(missing, ", "))
	}
	return nil
}

// The weight files looked for, in order.
var weightFiles = []string{"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json"}

// LoadWeights loads every tensor of the model folder dir (on the CPU) and
// returns them by name with the file (or index) they came from.
func LoadWeights(dir string) (map[string]*ember.Tensor, string, error) {
	for _, name := range weightFiles {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		var sd map[string]*ember.Tensor
		var err error
		switch {
		case strings.HasSuffix(name, ".index.json"):
			sd, err = loadSharded(dir, path)
		case strings.HasSuffix(name, ".safetensors"):
			sd, err = weights.LoadSafetensors(path)
		default:
			sd, err = weights.LoadPyTorch(path)
		}
		return sd, path, err
	}
	return nil, "", fmt.Errorf("%s: no weights: want one of %s", dir, strings.Join(weightFiles, ", "))
}

// loadSharded reads an index's weight_map and loads each shard once.
func loadSharded(dir, index string) (map[string]*ember.Tensor, error) {
	b, err := os.ReadFile(index)
	if err != nil {
		return nil, err
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w", index, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: empty or missing weight_map", index)
	}
	byShard := map[string][]string{}
	for k, f := range idx.WeightMap {
		if f != filepath.Base(f) || f == "." || f == ".." {
			return nil, fmt.Errorf("%s: shard %q of %s is not a file name in the folder", index, f, k)
		}
		byShard[f] = append(byShard[f], k)
	}
	shards := make([]string, 0, len(byShard))
	for f := range byShard {
		shards = append(shards, f)
	}
	sort.Strings(shards)
	out := map[string]*ember.Tensor{}
	for _, f := range shards {
		path := filepath.Join(dir, f)
		var sd map[string]*ember.Tensor
		if strings.HasSuffix(f, ".safetensors") {
			sd, err = weights.LoadSafetensors(path)
		} else {
			sd, err = weights.LoadPyTorch(path)
		}
		if err != nil {
			return nil, err
		}
		for _, k := range byShard[f] {
			t, ok := sd[k]
			if !ok {
				return nil, fmt.Errorf("%s: the index puts %s in %s, which has no such tensor", index, k, f)
			}
			out[k] = t
		}
	}
	return out, nil
}

// Weights is a loaded state dict being taken apart by a model's loader:
// Take finds each tensor (under any of the key prefixes) and checks its
// shape; Err reports every problem at once.
type Weights struct {
	Path     string
	sd       map[string]*ember.Tensor
	prefixes []string
	used     map[string]bool
	errs     []error
	dtype    ember.DType
}

// NewWeights wraps sd, whose keys may carry any of prefixes (tried in
// order; "" is always tried first).
func NewWeights(path string, sd map[string]*ember.Tensor, prefixes ...string) *Weights {
	return &Weights{Path: path, sd: sd, prefixes: append([]string{""}, prefixes...), used: map[string]bool{}, dtype: ember.Float32}
}

// SetDType makes Take return its tensors in dt (a floating dtype; Float32
// unless set): a checkpoint's tensors already in dt are kept as they are,
// others are cast (rounded to nearest even).
func (w *Weights) SetDType(dt ember.DType) { w.dtype = dt }

// CheckDType reports a dtype a model cannot run in: models load as
// Float32 (the default), BFloat16 or Float16 (torch_dtype).
func CheckDType(model string, dt ember.DType) error {
	switch dt {
	case ember.Float32, ember.BFloat16, ember.Float16:
		return nil
	}
	return fmt.Errorf("%s: dtype %v: want float32, bfloat16 or float16", model, dt)
}

// CheckLayers refuses a layer count the weights cannot hold: each of n
// layers has at least perLayer tensors, so the state dict must have n ×
// perLayer. Models call it before building their layers, which a hostile
// config.json's count would otherwise size: 10⁷ layers took minutes and
// gigabytes to report as missing, 10¹⁸ was a makeslice panic. field is the
// count's name in config.json.
func (w *Weights) CheckLayers(field string, n, perLayer int) error {
	if have := len(w.sd); n > have/perLayer {
		return fmt.Errorf("%s is %d, but %s holds %d tensors: too few for %d layers of at least %d each", field, n, w.Path, have, n, perLayer)
	}
	return nil
}

// Has reports whether the tensor name (under a prefix) is present.
func (w *Weights) Has(name string) bool {
	_, ok := w.find(name)
	return ok
}

func (w *Weights) find(name string) (string, bool) {
	for _, p := range w.prefixes {
		if _, ok := w.sd[p+name]; ok {
			return p + name, true
		}
	}
	return "", false
}

// Take returns the tensor name in the Weights' dtype (SetDType) with the given shape, or records
// an error (missing, or a shape that differs: the key and both shapes) and
// returns nil.
func (w *Weights) Take(name string, shape ...int) *ember.Tensor {
	key, ok := w.find(name)
	if !ok {
		w.errs = append(w.errs, fmt.Errorf("missing weight %s", name))
		return nil
	}
	w.used[key] = true
	t := w.sd[key]
	if !slices.Equal([]int(t.Shape()), shape) {
		w.errs = append(w.errs, fmt.Errorf("weight %s has shape %v, want %v", key, []int(t.Shape()), shape))
		return nil
	}
	if t.DType() != w.dtype {
		if !t.DType().IsFloat() {
			w.errs = append(w.errs, fmt.Errorf("weight %s has dtype %v, want a floating dtype", key, t.DType()))
			return nil
		}
		t = t.Cast(w.dtype)
	}
	return t
}

// Skip marks names as known but unused (buffers such as attn.bias).
func (w *Weights) Skip(match func(key string) bool) {
	for k := range w.sd {
		if match(k) {
			w.used[k] = true
		}
	}
}

// Err returns the problems found so far and any tensor that no Take
// used, or nil.
func (w *Weights) Err() error {
	var extra []string
	for k := range w.sd {
		if !w.used[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		if len(extra) > 5 {
			extra = append(extra[:5], fmt.Sprintf("and %d more", len(extra)-5))
		}
		w.errs = append(w.errs, fmt.Errorf("unexpected weights %s", strings.Join(extra, ", ")))
	}
	if len(w.errs) == 0 {
		return nil
	}
	if len(w.errs) > 8 {
		w.errs = append(w.errs[:8], fmt.Errorf("and %d more problems", len(w.errs)-8))
	}
	return fmt.Errorf("%s: %w", w.Path, errors.Join(w.errs...))
}

// IDs reads a token-id field of config.json (eos_token_id): a number, a
// list of numbers (Llama 3.1's [128001, 128008, 128009]) or null. Entries
// that are not ids (negative, fractional, past 2³¹) are left out.
func IDs(v any) []int {
	var ids []int
	add := func(e any) {
		if f, ok := e.(float64); ok && f >= 0 && f < 1<<31 && f == math.Trunc(f) {
			ids = append(ids, int(f))
		}
	}
	switch v := v.(type) {
	case float64:
		add(v)
	case []any:
		for _, e := range v {
			add(e)
		}
	}
	return ids
}

// FirstID is the first of IDs(v), or -1 for none.
func FirstID(v any) int {
	if ids := IDs(v); len(ids) > 0 {
		return ids[0]
	}
	return -1
}
