package weights

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"sort"
	"strings"

	"github.com/emberml/ember"
	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"
)

// Bounds of the .pth loader beyond the load limit (SetLoadLimit).
const (
	// maxViewElems is how many elements a tensor may have beyond its
	// storage's (a stride-0 expanded view) before the loader refuses it.
	maxViewElems = 1 << 20
	// maxPickle bounds data.pkl; pickleRatio bounds it against the file's
	// size (torch stores it uncompressed).
	maxPickle   = 64 << 20
	pickleRatio = 4
	// maxDeflate is how many times its compressed size a deflated record
	// may inflate to (deflate's own limit is about 1032).
	maxDeflate = 1032
	// maxVisits bounds the tensors and containers flattened (containers
	// shared through the memo are walked once per reference; the numbers,
	// strings and such in a container are not counted, and a container
	// holding nothing else is walked once).
	maxVisits = 1 << 20
)

var storageKinds = map[string]elemKind{
	"FloatStorage": kF32, "DoubleStorage": kF64, "HalfStorage": kF16, "BFloat16Storage": kBF16,
	"LongStorage": kI64, "IntStorage": kI32, "ShortStorage": kI16, "CharStorage": kI8,
	"ByteStorage": kU8, "BoolStorage": kBool,
}

// LoadPyTorch reads the tensors of a file written by torch.save in its zip
// format (the default since PyTorch 1.6): a state dict, or a dict holding
// state dicts. Nested dicts, lists and tuples are flattened with dotted
// keys ({"model": {"fc.weight": t}} gives "model.fc.weight", {"anchors":
// [a, b]} gives "anchors.0" and "anchors.1", a list [a, b] "0" and "1");
// values that are not tensors or containers (epoch numbers, strings) are
// skipped. Only the
// classes a state dict needs are resolved, and no code named by the file
// is ever run: any other Python object (an argparse.Namespace of
// hyperparameters, a NumPy scalar, a torch.Size) is kept opaque and
// skipped, unless it holds tensors (a pickled module, as torch.save(model)
// writes), which is an error, as is a complex, quantized or sparse tensor.
// Tensors are loaded onto the CPU.
func LoadPyTorch(path string) (map[string]*ember.Tensor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := ParsePyTorch(data)
	if fe, ok := err.(*FormatError); ok {
		fe.Path = path
	}
	return m, err
}

type ptLoader struct {
	zr       *zip.Reader
	files    map[string]*zip.File // by name
	size     int64
	prefix   string
	bigEnd   bool
	storages map[string]*ptStorage
	budget   *budget
}

// ptStorage is a storage record decoded once into a 1-D tensor; the
// tensors of the file are views of it, as in PyTorch.
type ptStorage struct {
	kind elemKind
	t    *ember.Tensor
}

type storageClass struct{ kind elemKind }

type ptTensor struct{ t *ember.Tensor }

type callFunc func(args ...any) (any, error)

func (f callFunc) Call(args ...any) (any, error) { return f(args...) }

// ParsePyTorch is LoadPyTorch on a file held in memory.
func ParsePyTorch(data []byte) (m map[string]*ember.Tensor, err error) {
	bad := func(format string, a ...any) error {
		return &FormatError{Format: "pytorch", Msg: fmt.Sprintf(format, a...)}
	}
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, bad("malformed file: %v", r)
		}
	}()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if len(data) >= 2 && data[0] == 0x80 {
			return nil, bad("legacy (pre-1.6, non-zip) torch.save format is not supported; re-save it with a current PyTorch")
		}
		return nil, bad("not a zip archive: %v", err)
	}
	l := &ptLoader{zr: zr, size: int64(len(data)), storages: map[string]*ptStorage{}, budget: newBudget(int64(len(data)))}
	if err := l.index(); err != nil {
		return nil, bad("%v", err)
	}
	var pkl *zip.File
	for _, f := range zr.File {
		if dir, ok := strings.CutSuffix(f.Name, "/data.pkl"); ok && !strings.Contains(dir, "/") {
			pkl, l.prefix = f, dir+"/"
			break
		}
	}
	if pkl == nil {
		return nil, bad("no <archive>/data.pkl record in the zip")
	}
	if bo, err := l.record("byteorder", 16); err == nil {
		switch string(bo) {
		case "little":
		case "big":
			l.bigEnd = true
		default:
			return nil, bad("unknown byteorder %q", bo)
		}
	}
	p, err := l.read(pkl, min(maxPickle, pickleRatio*l.size+64<<10))
	if err != nil {
		return nil, bad("data.pkl: %v", err)
	}
	if err := l.budget.charge(int64(len(p)), "data.pkl"); err != nil {
		return nil, bad("%v", err)
	}
	if err := scanPickle(p); err != nil {
		return nil, bad("data.pkl: %v", err)
	}
	u := pickle.NewUnpickler(bytes.NewReader(p))
	u.FindClass = l.findClass
	u.PersistentLoad = l.persistentLoad
	obj, err := u.Load()
	if err != nil {
		return nil, bad("data.pkl: %v", err)
	}
	out := map[string]*ember.Tensor{}
	st := &flattening{visits: maxVisits, kept: map[any][]kv{}}
	if err := flatten("", obj, out, 0, st); err != nil {
		return nil, bad("%v", err)
	}
	return out, nil
}

// read returns the uncompressed bytes of f, refusing more than limit bytes.
func (l *ptLoader) read(f *zip.File, limit int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("record %s of %d bytes exceeds the %d-byte limit", f.Name, f.UncompressedSize64, limit)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", f.Name, err)
	}
	if uint64(len(b)) != f.UncompressedSize64 {
		return nil, fmt.Errorf("record %s holds %d bytes, its header says %d", f.Name, len(b), f.UncompressedSize64)
	}
	return b, nil
}

func (l *ptLoader) record(name string, limit int64) ([]byte, error) {
	if f := l.files[l.prefix+name]; f != nil {
		return l.read(f, limit)
	}
	return nil, fmt.Errorf("no record %s%s", l.prefix, name)
}

// index maps the records by name and refuses an archive whose entries
// share bytes (a central directory listing one compressed entry many
// times inflates it many times) or reach past the file, or that names a
// record twice.
func (l *ptLoader) index() error {
	type span struct {
		name       string
		begin, end int64
	}
	spans := make([]span, 0, len(l.zr.File))
	l.files = make(map[string]*zip.File, len(l.zr.File))
	for _, f := range l.zr.File {
		if _, dup := l.files[f.Name]; dup {
			return fmt.Errorf("zip entry %s appears twice", f.Name)
		}
		l.files[f.Name] = f
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Errorf("zip entry %s: %v", f.Name, err)
		}
		if f.CompressedSize64 > uint64(l.size) || off > l.size-int64(f.CompressedSize64) {
			return fmt.Errorf("zip entry %s: %d bytes at %d run past the %d-byte file", f.Name, f.CompressedSize64, off, l.size)
		}
		spans = append(spans, span{f.Name, off, off + int64(f.CompressedSize64)})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].begin < spans[j].begin })
	for i := 1; i < len(spans); i++ {
		if spans[i].begin < spans[i-1].end || spans[i].begin == spans[i-1].begin {
			return fmt.Errorf("zip entries %s and %s overlap", spans[i-1].name, spans[i].name)
		}
	}
	return nil
}

// limit is the most bytes a storage record may inflate to: its own size
// for stored (uncompressed) records, as torch writes them, maxDeflate
// times its compressed size for deflated ones (within the load's budget).
func (l *ptLoader) limit(f *zip.File) int64 {
	if f.Method == zip.Store {
		return int64(f.CompressedSize64)
	}
	return maxDeflate * max(int64(f.CompressedSize64), 1)
}

func (l *ptLoader) findClass(module, name string) (any, error) {
	if module == "torch" {
		if k, ok := storageKinds[name]; ok {
			return &storageClass{k}, nil
		}
	}
	switch module + "." + name {
	case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
		return callFunc(l.rebuildTensor), nil
	case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state":
		return callFunc(func(args ...any) (any, error) {
			if len(args) < 1 {
				return nil, fmt.Errorf("_rebuild_parameter: no arguments")
			}
			if _, ok := args[0].(*ptTensor); !ok {
				return nil, fmt.Errorf("_rebuild_parameter: argument is %T, not a tensor", args[0])
			}
			return args[0], nil
		}), nil
	}
	full := module + "." + name
	switch {
	case module == "torch" && strings.HasPrefix(name, "Complex") && strings.HasSuffix(name, "Storage"):
		return nil, fmt.Errorf("global %s: complex tensors are not supported (ember has no complex dtype; save torch.view_as_real(t) instead)", full)
	case module == "torch" && strings.HasPrefix(name, "Q") && strings.HasSuffix(name, "Storage"), full == "torch._utils._rebuild_qtensor":
		return nil, fmt.Errorf("global %s: quantized tensors are not supported (save t.dequantize() instead)", full)
	case strings.HasPrefix(full, "torch._utils._rebuild_"):
		return nil, fmt.Errorf("global %s: sparse, nested and other tensors that are not strided are not supported (save t.to_dense() instead)", full)
	case module == "torch" && strings.HasSuffix(name, "Storage"):
		return nil, fmt.Errorf("global %s: storage type not supported", full)
	}
	return &opaque{class: full}, nil
}

// opaque is any Python object or class the loader does not know: a
// class, calling it (REDUCE, NEWOBJ) or building it (BUILD, SETITEM,
// APPEND) only records what it was given, so no code runs and the tensors
// inside stay visible to flatten, which skips an opaque object without
// tensors and refuses one with them.
type opaque struct {
	class string
	parts []any
}

func (o *opaque) Call(args ...any) (any, error)  { return &opaque{class: o.class, parts: args}, nil }
func (o *opaque) PyNew(args ...any) (any, error) { return o.Call(args...) }
func (o *opaque) PySetState(state any) error {
	o.parts = append(o.parts, state)
	return nil
}
func (o *opaque) Set(key, value any) { o.parts = append(o.parts, key, value) }
func (o *opaque) Append(value any)   { o.parts = append(o.parts, value) }

// holdsTensor reports whether a tensor is reachable from v, visiting each
// container once (the memo can share and even cycle them) and at most
// *visits of them.
func holdsTensor(v any, visits *int) (bool, error) {
	seen := map[any]bool{}
	stack := []any{v}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x.(type) {
		case *ptTensor:
			return true, nil
		case *opaque, *types.Tuple, *types.List, *types.Dict, *types.OrderedDict:
			if seen[x] {
				continue
			}
			seen[x] = true
			if *visits--; *visits < 0 {
				return false, fmt.Errorf("more than %d objects to walk (containers shared through the pickle memo?)", maxVisits)
			}
		}
		switch c := x.(type) {
		case *opaque:
			stack = append(stack, c.parts...)
		case *types.Tuple:
			stack = append(stack, *c...)
		case *types.List:
			stack = append(stack, *c...)
		case *types.Dict:
			for _, e := range *c {
				stack = append(stack, e.Key, e.Value)
			}
		case *types.OrderedDict:
			for e := c.List.Front(); e != nil; e = e.Next() {
				ent := e.Value.(*types.OrderedDictEntry)
				stack = append(stack, ent.Key, ent.Value)
			}
		}
	}
	return false, nil
}

func (l *ptLoader) persistentLoad(pid any) (any, error) {
	t, ok := pid.(*types.Tuple)
	if !ok || t.Len() < 5 {
		return nil, fmt.Errorf("persistent id %v is not a ('storage', type, key, location, numel) tuple", pid)
	}
	if s, _ := t.Get(0).(string); s != "storage" {
		return nil, fmt.Errorf("persistent id kind %v is not 'storage'", t.Get(0))
	}
	sc, ok := t.Get(1).(*storageClass)
	if !ok {
		return nil, fmt.Errorf("persistent id storage type %v is not a torch storage class", t.Get(1))
	}
	key, ok := t.Get(2).(string)
	if !ok {
		return nil, fmt.Errorf("persistent id key %v is not a string", t.Get(2))
	}
	numel, ok := toInt(t.Get(4))
	if !ok || numel < 0 {
		return nil, fmt.Errorf("storage %s: numel %v is not a non-negative int", key, t.Get(4))
	}
	if s, ok := l.storages[key]; ok {
		if s.kind != sc.kind {
			return nil, fmt.Errorf("storage %s used with two element types", key)
		}
		return s, nil
	}
	f := l.files[l.prefix+"data/"+key]
	if f == nil {
		return nil, fmt.Errorf("storage %s: no record %sdata/%s", key, l.prefix, key)
	}
	w := int64(sc.kind.size())
	if f.UncompressedSize64 > uint64(math.MaxInt64/2) || uint64(numel)*uint64(w) != f.UncompressedSize64 {
		return nil, fmt.Errorf("storage %s: %d elements of %d bytes need %d bytes, its record holds %d", key, numel, w, uint64(numel)*uint64(w), f.UncompressedSize64)
	}
	if int64(f.UncompressedSize64) > l.limit(f) {
		return nil, fmt.Errorf("storage %s: record of %d bytes inflates more than %d× its %d compressed bytes", key, f.UncompressedSize64, l.limit(f)/max(int64(f.CompressedSize64), 1), f.CompressedSize64)
	}
	// The record's bytes and the decoded tensor are alive together.
	if err := l.budget.charge(int64(f.UncompressedSize64)+numel*int64(sc.kind.dtype().Size()), "storage "+key); err != nil {
		return nil, err
	}
	b, err := l.read(f, int64(f.UncompressedSize64))
	if err != nil {
		return nil, fmt.Errorf("storage %s: %w", key, err)
	}
	if l.bigEnd && sc.kind.size() > 1 {
		w := sc.kind.size()
		for i := 0; i+w <= len(b); i += w {
			for a, z := i, i+w-1; a < z; a, z = a+1, z-1 {
				b[a], b[z] = b[z], b[a]
			}
		}
	}
	s := &ptStorage{kind: sc.kind, t: decode(sc.kind, b, ember.Shape{int(numel)})}
	l.storages[key] = s
	return s, nil
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
	}
	return 0, false
}

func intTuple(v any, what string) ([]int64, error) {
	t, ok := v.(*types.Tuple)
	if !ok {
		return nil, fmt.Errorf("_rebuild_tensor: %s %v is not a tuple", what, v)
	}
	out := make([]int64, t.Len())
	for i := range out {
		x, ok := toInt(t.Get(i))
		if !ok || x < 0 {
			return nil, fmt.Errorf("_rebuild_tensor: %s %v holds a non-int or negative entry", what, v)
		}
		out[i] = x
	}
	return out, nil
}

// rebuildTensor is torch._utils._rebuild_tensor_v2(storage, storage_offset,
// size, stride, requires_grad, backward_hooks[, metadata]).
func (l *ptLoader) rebuildTensor(args ...any) (any, error) {
	if len(args) < 4 {
		return nil, fmt.Errorf("_rebuild_tensor: %d arguments, want at least 4", len(args))
	}
	s, ok := args[0].(*ptStorage)
	if !ok {
		return nil, fmt.Errorf("_rebuild_tensor: first argument is %T, not a storage", args[0])
	}
	off, ok := toInt(args[1])
	if !ok || off < 0 {
		return nil, fmt.Errorf("_rebuild_tensor: storage offset %v is not a non-negative int", args[1])
	}
	size, err := intTuple(args[2], "size")
	if err != nil {
		return nil, err
	}
	stride, err := intTuple(args[3], "stride")
	if err != nil {
		return nil, err
	}
	if len(size) != len(stride) {
		return nil, fmt.Errorf("_rebuild_tensor: size %v and stride %v differ in rank", size, stride)
	}
	snumel := int64(s.t.NumElements())
	numel := int64(1)
	last := off // largest element index reached
	for i, d := range size {
		if d == 0 {
			numel = 0
			break
		}
		if numel > (1<<60)/d {
			return nil, fmt.Errorf("_rebuild_tensor: size %v overflows", size)
		}
		numel *= d
		if stride[i] > (1<<60)/d {
			return nil, fmt.Errorf("_rebuild_tensor: stride %v overflows", stride)
		}
		last += (d - 1) * stride[i]
		if last > 1<<60 {
			return nil, fmt.Errorf("_rebuild_tensor: stride %v overflows", stride)
		}
	}
	if err := l.budget.tensor(); err != nil {
		return nil, err
	}
	shape := make(ember.Shape, len(size))
	st := make([]int, len(size))
	for i, d := range size {
		shape[i], st[i] = int(d), int(stride[i])
	}
	if numel == 0 {
		return &ptTensor{decode(s.kind, nil, shape)}, nil
	}
	if last >= snumel {
		return nil, fmt.Errorf("_rebuild_tensor: size %v stride %v offset %d reach element %d of a %d-element storage", size, stride, off, last, snumel)
	}
	if numel > snumel && numel > maxViewElems {
		return nil, fmt.Errorf("_rebuild_tensor: %d elements view a storage of %d", numel, snumel)
	}
	var t *ember.Tensor
	if err := ember.Try(func() { t = s.t.AsStrided(shape, st, int(off)) }); err != nil {
		return nil, fmt.Errorf("_rebuild_tensor: %v", err)
	}
	return &ptTensor{t}, nil
}

// flattening is flatten's state: the visits left, and each container's
// entries that can hold tensors (containers, tensors, opaque objects),
// found once: a container shared through the memo is walked again on
// every reference, over those entries only, however many numbers and
// strings it also holds.
type flattening struct {
	visits int
	kept   map[any][]kv
}

type kv struct{ k, v any }

// entries returns the entries of the container obj that can hold tensors.
func (st *flattening) entries(obj any) []kv {
	if e, ok := st.kept[obj]; ok {
		return e
	}
	var e []kv
	add := func(k, v any) {
		switch v.(type) {
		case *ptTensor, *types.Dict, *types.OrderedDict, *types.List, *types.Tuple, *opaque:
			e = append(e, kv{k, v})
		}
	}
	switch d := obj.(type) {
	case *types.OrderedDict:
		for el := d.List.Front(); el != nil; el = el.Next() {
			ent := el.Value.(*types.OrderedDictEntry)
			add(ent.Key, ent.Value)
		}
	case *types.Dict:
		for _, ent := range *d {
			add(ent.Key, ent.Value)
		}
	case *types.List:
		for i, v := range *d {
			add(i, v)
		}
	case *types.Tuple:
		for i, v := range *d {
			add(i, v)
		}
	}
	st.kept[obj] = e
	return e
}

func flatten(prefix string, obj any, out map[string]*ember.Tensor, depth int, st *flattening) error {
	if depth > 32 {
		return fmt.Errorf("dicts and lists nested more than 32 deep")
	}
	put := func(k, v any) error {
		if st.visits--; st.visits < 0 {
			return fmt.Errorf("more than %d tensors and containers to flatten (containers shared through the pickle memo?)", maxVisits)
		}
		ks, ok := k.(string)
		if !ok {
			if i, ok := toInt(k); ok {
				ks = fmt.Sprint(i)
			} else {
				return nil // keys that are not names cannot be state dict entries
			}
		}
		name := ks
		if prefix != "" {
			name = prefix + "." + ks
		}
		switch x := v.(type) {
		case *ptTensor:
			if _, dup := out[name]; dup {
				return fmt.Errorf("key %q appears twice after flattening", name)
			}
			out[name] = x.t
		case *types.Dict, *types.OrderedDict, *types.List, *types.Tuple:
			return flatten(name, x, out, depth+1, st)
		case *opaque:
			if held, err := holdsTensor(x, &st.visits); err != nil || !held {
				return err
			}
			return fmt.Errorf("key %q is a pickled %s holding tensors, which are not read (for a model saved whole with torch.save(model), save model.state_dict() instead)", name, x.class)
		}
		return nil
	}
	switch d := obj.(type) {
	case *types.OrderedDict, *types.Dict, *types.List, *types.Tuple: // pointers: comparable
		for _, e := range st.entries(d) {
			if err := put(e.k, e.v); err != nil {
				return err
			}
		}
	case *ptTensor:
		if prefix == "" {
			out[""] = d.t
		}
	case *opaque:
		if depth == 0 {
			return fmt.Errorf("top-level object is a pickled %s, not a dict of tensors (for a model saved whole with torch.save(model), save model.state_dict() instead)", d.class)
		}
	default:
		if depth == 0 {
			return fmt.Errorf("top-level object is %T, not a dict of tensors", obj)
		}
	}
	return nil
}

// Keys returns m's keys in sorted order.
func Keys(m map[string]*ember.Tensor) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
