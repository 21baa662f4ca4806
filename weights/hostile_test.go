package weights

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember"
)

// The crafted files are made by testdata/hostile/gen_hostile.py.
func hostile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/hostile/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantFormatError(t *testing.T, name string, err error, substr string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	if _, ok := err.(*FormatError); !ok {
		t.Errorf("%s: error %T %v, want *FormatError", name, err, err)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Errorf("%s: error %q, want it to say %q", name, err, substr)
	}
}

// 2000 entries of one memoized tensor over a 1 MiB storage: one storage,
// shared, as torch.load gives (it was 2000 copies, 3 GB at full size).
func TestPyTorchMemoSharedStorage(t *testing.T) {
	m, err := ParsePyTorch(hostile(t, "memo_shared.pth"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2000 {
		t.Fatalf("%d tensors, want 2000", len(m))
	}
	for _, k := range []string{"t0", "t1999"} {
		v := m[k]
		if !v.Shape().Equal(ember.Shape{1 << 18}) {
			t.Fatalf("%s: shape %v", k, v.Shape())
		}
		if x := v.Index(7).Item(); x != 3.5 {
			t.Errorf("%s[7] = %v, want 3.5", k, x)
		}
	}
	// Writing through one is seen through another: one storage.
	m["t0"].Narrow(0, 0, 1).CopyFrom(ember.Full(ember.Shape{1}, 2))
	if x := m["t1999"].Index(0).Item(); x != 2 {
		t.Errorf("t1999[0] = %v after writing t0[0] = 2: storages are not shared", x)
	}
}

// 1000 stride-0 views of a 4-element storage stay views (1000 × 4 MiB when
// each was gathered).
func TestPyTorchStrideZeroViews(t *testing.T) {
	m, err := ParsePyTorch(hostile(t, "stride0_views.pth"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1000 {
		t.Fatalf("%d tensors, want 1000", len(m))
	}
	for _, k := range []string{"v0", "v3", "v998"} {
		v := m[k]
		if st := v.Strides(); len(st) != 1 || st[0] != 0 || v.NumElements() != 1<<20 {
			t.Errorf("%s: %d elements, strides %v, want a stride-0 view of 1<<20", k, v.NumElements(), st)
		}
	}
	// small[i%4:i%4+1].expand(1<<20): v998 is 2.0 everywhere.
	if x := m["v998"].Index(12345).Item(); x != 2 {
		t.Errorf("v998[12345] = %v, want 2", x)
	}
}

func TestPyTorchHostileArchives(t *testing.T) {
	for _, c := range []struct{ file, says string }{
		{"zip_dup_entries.pth", "overlap"},
		{"widened_u8.pth", "weights.SetLoadLimit"},
		{"pickle_marks_deflated.pth", "exceeds the"},
		{"pickle_marks_nested.pth", "nested MARKs"},
		{"pickle_empty_dicts.pth", "exceeds the"},
	} {
		_, err := ParsePyTorch(hostile(t, c.file))
		wantFormatError(t, c.file, err, c.says)
	}
	// Raising the limit loads the widened file: 8 MiB of uint8 as int32.
	old := SetLoadLimit(64 << 20)
	defer SetLoadLimit(old)
	m, err := ParsePyTorch(hostile(t, "widened_u8.pth"))
	if err != nil {
		t.Fatal(err)
	}
	if u := m["u"]; u.DType() != ember.Int32 || u.NumElements() != 8<<20 || u.Sum().Item() != 0 {
		t.Errorf("u: %v %v", u.DType(), u.Shape())
	}
}

// The pickle scanner bounds the stack, the open MARKs, the memo and the
// opcodes: runs the unpickler would allocate for without limit.
func TestScanPickleBounds(t *testing.T) {
	for name, c := range map[string]struct {
		p    []byte
		says string
	}{
		"empty dicts": {append(bytes.Repeat([]byte("}"), maxStack+1), '.'), "objects on the pickle stack"},
		"marks":       {append(bytes.Repeat([]byte("("), maxMarks+1), '.'), "nested MARKs"},
		"memo":        {append(bytes.Repeat([]byte("N\x940"), maxMemo+1), '.'), "memo entries"},
		"opcodes":     {append(bytes.Repeat([]byte("N0"), maxOps/2+1), '.'), "opcodes"},
	} {
		err := scanPickle(c.p)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %q", name, err, c.says)
		}
	}
	// Balanced work within the bounds passes: a dict filled by SETITEMS
	// batches, as the pickler writes it.
	var p bytes.Buffer
	p.WriteString("\x80\x02}")
	for b := 0; b < 50; b++ {
		p.WriteString("(")
		for i := 0; i < 1000; i++ {
			p.WriteString("NN")
		}
		p.WriteString("u")
	}
	p.WriteString(".")
	if err := scanPickle(p.Bytes()); err != nil {
		t.Error(err)
	}
}

// A dict shared through the memo, nested: walked once per reference it
// would take 2^32 steps.
func TestPyTorchSharedDictWalk(t *testing.T) {
	var p bytes.Buffer
	p.WriteString("\x80\x02}q\x00") // memo 0: the innermost dict
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&p, "}q%c(X\x01\x00\x00\x00ah%cX\x01\x00\x00\x00bh%cu", i, i-1, i-1)
	}
	p.WriteString(".")
	_, err := ParsePyTorch(zipWith(t, map[string][]byte{"a/data.pkl": p.Bytes()}))
	wantFormatError(t, "shared dicts", err, "containers to flatten")
}

// 60000 records: the storage lookup is a map, not a scan per record.
func TestPyTorchManyRecords(t *testing.T) {
	const n = 60000
	var p bytes.Buffer
	p.WriteString("\x80\x02}(")
	files := map[string][]byte{}
	for i := 0; i < n; i++ {
		key := fmt.Sprint(i)
		fmt.Fprintf(&p, "X%c\x00\x00\x00%sctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX%c\x00\x00\x00%sX\x03\x00\x00\x00cpuK\x01tQK\x00K\x01\x85K\x01\x85\x89NtR",
			len(key), key, len(key), key)
		files["a/data/"+key] = []byte{0, 0, 0x80, 0x3f}
		if i%1000 == 999 {
			p.WriteString("u(")
		}
	}
	p.WriteString("u.")
	files["a/data.pkl"] = p.Bytes()
	data := zipStored(t, files)
	start := time.Now()
	m, err := ParsePyTorch(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != n || m["59999"].Item() != 1 {
		t.Fatalf("%d tensors", len(m))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("%d records took %v", n, d)
	}
}

func zipStored(t *testing.T, files map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	zw.Close()
	return b.Bytes()
}

func TestSafetensorsHostile(t *testing.T) {
	for _, c := range []struct{ file, says string }{
		{"st_duplicate_key.safetensors", `"a" appears twice`},
		{"st_non_utf8.safetensors", "UTF-8"},
		{"st_offsets_three.safetensors", "3 numbers, want 2"},
		{"st_offsets_one.safetensors", "1 numbers, want 2"},
		{"st_offsets_float.safetensors", "not a 64-bit integer"},
	} {
		_, _, err := ParseSafetensors(hostile(t, c.file))
		wantFormatError(t, c.file, err, c.says)
	}
	for name, c := range map[string]struct{ hdr, says string }{
		"field twice":   {`{"a":{"dtype":"U8","dtype":"F32","shape":[1],"data_offsets":[0,1]}}`, "appears twice"},
		"metadata dup":  {`{"__metadata__":{},"__metadata__":{}}`, "twice"},
		"no shape":      {`{"a":{"dtype":"U8","data_offsets":[0,1]}}`, "no shape"},
		"trailing json": {`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}{}`, "after the header"},
	} {
		_, _, err := ParseSafetensors(stFile(c.hdr, []byte{0}))
		wantFormatError(t, name, err, c.says)
	}
	// Many tiny tensors are charged against the load limit.
	var h strings.Builder
	h.WriteString("{")
	for i := 0; i < 40000; i++ {
		if i > 0 {
			h.WriteString(",")
		}
		fmt.Fprintf(&h, `"%d":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`, i)
	}
	h.WriteString("}")
	old := SetLoadLimit(8 << 20)
	_, _, err := ParseSafetensors(stFile(h.String(), nil))
	SetLoadLimit(old)
	wantFormatError(t, "40000 empty tensors under an 8 MiB limit", err, "exceed its limit")
}

// A header naming more than MaxTensors tensors is refused before they are
// made (a 90 MB header of empty tensors cost 1.4 GB).
func TestSafetensorsTooManyTensors(t *testing.T) {
	var h bytes.Buffer
	h.WriteString("{")
	for i := 0; i <= MaxTensors; i++ {
		if i > 0 {
			h.WriteString(",")
		}
		fmt.Fprintf(&h, `"%d":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`, i)
	}
	h.WriteString("}")
	_, _, err := ParseSafetensors(stFile(h.String(), nil))
	wantFormatError(t, "too many tensors", err, "more than 262144 tensors")
}

// Opaque objects (unknown globals) may hold themselves through the memo;
// looking for tensors inside them terminates, and finds one behind a cycle.
func TestPyTorchOpaqueCycles(t *testing.T) {
	// {'k': o} where o = Foo.__new__(Foo) and o.__setstate__(o)
	self := "\x80\x02}X\x01\x00\x00\x00kc__main__\nFoo\n)\x81q\x00h\x00bs."
	m, err := ParsePyTorch(zipWith(t, map[string][]byte{"a/data.pkl": []byte(self)}))
	if err != nil || len(m) != 0 {
		t.Fatalf("self-holding object: %v %v, want it skipped", m, err)
	}
	// the same object also holding a tensor: refused, naming the key
	withTensor := "\x80\x02}X\x01\x00\x00\x00kc__main__\nFoo\n)\x81q\x00h\x00b" +
		"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x02tQK\x00K\x02\x85K\x01\x85\x89NtRbs."
	_, err = ParsePyTorch(zipWith(t, map[string][]byte{"a/data.pkl": []byte(withTensor), "a/data/0": make([]byte, 8)}))
	if err == nil || !strings.Contains(err.Error(), `key "k" is a pickled __main__.Foo holding tensors`) {
		t.Fatalf("object holding a tensor: %v", err)
	}
}

// A checkpoint's list of numbers (a loss history) costs nothing of the
// flattening budget, however long, and a list of them shared through the
// memo is walked once: {'losses': [1]*1.2M, 'again': <the same list>}
// loaded before lists were flattened, and must still.
func TestPyTorchLongNumberList(t *testing.T) {
	var p bytes.Buffer
	p.WriteString("\x80\x02}q\x00(X\x06\x00\x00\x00losses]q\x01")
	for range 1200 { // APPENDS in batches of 1000, as pickle writes them
		p.WriteString("(")
		p.Write(bytes.Repeat([]byte("K\x01"), 1000))
		p.WriteString("e")
	}
	p.WriteString("X\x05\x00\x00\x00againh\x01u.")
	m, err := ParsePyTorch(zipWith(t, map[string][]byte{"a/data.pkl": p.Bytes()}))
	if err != nil || len(m) != 0 {
		t.Fatalf("got %d tensors, %v; want none and no error", len(m), err)
	}
}

// A list of numbers holding one empty list, shared through the memo by
// 200000 references ({'a': [L]*200000}, L = [[]] + [0]*100000), is walked
// over its one container entry on each reference, not its 100001 entries:
// a 0.7 MB file took hours.
func TestPyTorchSharedListWithNumbers(t *testing.T) {
	var p bytes.Buffer
	p.WriteString("\x80\x02}q\x00(X\x01\x00\x00\x00a]q\x01]q\x02]a")
	for range 100 {
		p.WriteString("(")
		p.Write(bytes.Repeat([]byte("K\x00"), 1000))
		p.WriteString("e")
	}
	p.WriteString("a") // outer.append(L)
	for range 200 {
		p.WriteString("(")
		p.Write(bytes.Repeat([]byte("h\x02"), 1000))
		p.WriteString("e")
	}
	p.WriteString("u.")
	m, err := ParsePyTorch(zipWith(t, map[string][]byte{"a/data.pkl": p.Bytes()}))
	if err != nil || len(m) != 0 {
		t.Fatalf("got %d tensors, %v; want none and no error", len(m), err)
	}
}
