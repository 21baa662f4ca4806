package kcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var testKey = NewKey(KeyInput{Source: "__global__ void k() {}", Options: []string{"-arch=sm_90"}, Arch: "sm_90", NVRTCVersion: "11.8"})

func TestEncodeLayout(t *testing.T) {
	got := Encode(testKey, []byte("abc"))
	// Worked out by hand: magic, the key, 3 as a little-endian uint64, SHA-256("abc").
	want := append([]byte("EMBERK02"), testKey[:]...)
	want = append(want, "\x03\x00\x00\x00\x00\x00\x00\x00"...)
	sum, _ := hex.DecodeString("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
	want = append(want, sum...)
	want = append(want, "abc"...)
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode(abc) =\n%x\nwant\n%x", got, want)
	}
	if HeaderSize != 80 {
		t.Errorf("HeaderSize = %d, want 80", HeaderSize)
	}
}

func TestNewKey(t *testing.T) {
	base := KeyInput{Source: "s", Options: []string{"-a", "-b"}, Arch: "sm_80", NVRTCVersion: "11.8"}
	k := NewKey(base)
	if NewKey(base) != k {
		t.Fatal("NewKey is not deterministic")
	}
	variants := []KeyInput{
		{Source: "s2", Options: base.Options, Arch: base.Arch, NVRTCVersion: base.NVRTCVersion},
		{Source: "s", Options: []string{"-a -b"}, Arch: base.Arch, NVRTCVersion: base.NVRTCVersion},
		{Source: "s", Options: []string{"-b", "-a"}, Arch: base.Arch, NVRTCVersion: base.NVRTCVersion},
		{Source: "s", Options: base.Options, Arch: "sm_90", NVRTCVersion: base.NVRTCVersion},
		{Source: "s", Options: base.Options, Arch: base.Arch, NVRTCVersion: "12.4"},
		{Source: "s-a", Options: []string{"-b"}, Arch: base.Arch, NVRTCVersion: base.NVRTCVersion},
	}
	for i, v := range variants {
		if NewKey(v) == k {
			t.Errorf("variant %d %+v hashes like the base", i, v)
		}
	}
	if len(k.String()) != 64 {
		t.Errorf("String() = %q, want 64 hex digits", k.String())
	}
}

func TestRoundTrip(t *testing.T) {
	c := New(filepath.Join(t.TempDir(), "a", "b")) // made on first Put
	if _, ok := c.Get(testKey); ok {
		t.Fatal("hit in an empty cache")
	}
	payload := []byte("\x7fELF fake cubin \x00\x01\x02")
	if err := c.Put(testKey, payload); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Get(testKey)
	if !ok || !bytes.Equal(got, payload) {
		t.Fatalf("Get = %q, %v; want %q, true", got, ok, payload)
	}
	// Overwrite.
	if err := c.Put(testKey, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get(testKey); !ok || string(got) != "v2" {
		t.Fatalf("after overwrite Get = %q, %v", got, ok)
	}
	// Empty payloads are entries too.
	k2 := NewKey(KeyInput{Source: "empty"})
	if err := c.Put(k2, nil); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get(k2); !ok || len(got) != 0 {
		t.Fatalf("empty payload: Get = %q, %v", got, ok)
	}
	// Only entry files are left behind.
	ents, _ := os.ReadDir(c.Dir())
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), entrySuffix) {
			t.Errorf("stray file %s", e.Name())
		}
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("EMBER_CACHE_DIR", "/some/where")
	if d, err := DefaultDir(); err != nil || d != "/some/where" {
		t.Errorf("DefaultDir() = %q, %v", d, err)
	}
	t.Setenv("EMBER_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d, err := DefaultDir(); err != nil || d != "/xdg/ember/kernels" {
		t.Errorf("DefaultDir() = %q, %v; want /xdg/ember/kernels", d, err)
	}
}

// damage writes a bad entry for testKey and checks it is a miss, is removed,
// and that GetOrCompile rebuilds it.
func damage(t *testing.T, mutate func(entry []byte) []byte) {
	t.Helper()
	c := New(t.TempDir())
	if err := c.Put(testKey, []byte("good payload")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.Path(testKey))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Path(testKey), mutate(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get(testKey); ok {
		t.Fatalf("damaged entry returned: %q", got)
	}
	if _, err := os.Stat(c.Path(testKey)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("damaged entry not removed: %v", err)
	}
	calls := 0
	got, err := c.GetOrCompile(testKey, func() ([]byte, error) { calls++; return []byte("rebuilt"), nil })
	if err != nil || string(got) != "rebuilt" || calls != 1 {
		t.Fatalf("GetOrCompile = %q, %v after %d compiles", got, err, calls)
	}
	if got, ok := c.Get(testKey); !ok || string(got) != "rebuilt" {
		t.Fatalf("rebuilt entry: Get = %q, %v", got, ok)
	}
}

func TestCorruptByte(t *testing.T) {
	damage(t, func(b []byte) []byte { b[len(b)-3] ^= 0x40; return b })
}

func TestCorruptChecksum(t *testing.T) {
	damage(t, func(b []byte) []byte { b[sumAt+3] ^= 1; return b })
}

func TestTruncated(t *testing.T) {
	damage(t, func(b []byte) []byte { return b[:len(b)-1] })
	damage(t, func(b []byte) []byte { return b[:HeaderSize-1] })
	damage(t, func(b []byte) []byte { return b[:3] })
	damage(t, func(b []byte) []byte { return b[:0] })
}

func TestTrailingGarbage(t *testing.T) {
	damage(t, func(b []byte) []byte { return append(b, 0) })
}

func TestWrongMagic(t *testing.T) {
	damage(t, func(b []byte) []byte { copy(b, "EMBERK01"); return b })
	damage(t, func(b []byte) []byte { return []byte("\x7fELF\x02\x01\x01 a raw cubin, not an entry") })
}

func TestWrongLength(t *testing.T) {
	damage(t, func(b []byte) []byte { binary.LittleEndian.PutUint64(b[lenAt:], 1<<62); return b })
}

// TestAtomicWrite checks that while Put's temporary file holds the whole
// entry, just before the rename, a reader sees no entry; and that a crashed
// writer's leftover temp file is never read as an entry.
func TestAtomicWrite(t *testing.T) {
	c := New(t.TempDir())
	payload := bytes.Repeat([]byte("k"), 1<<16)
	var sawTemp bool
	c.beforeRename = func(tmp string) {
		sawTemp = true
		if filepath.Dir(tmp) != c.Dir() {
			t.Errorf("temp file %s is not in the cache folder %s", tmp, c.Dir())
		}
		data, err := os.ReadFile(tmp)
		if err != nil || !bytes.Equal(data, Encode(testKey, payload)) {
			t.Errorf("temp file does not hold the whole entry before the rename (%d bytes, %v)", len(data), err)
		}
		if _, ok := c.Get(testKey); ok {
			t.Error("entry visible before the rename")
		}
	}
	if err := c.Put(testKey, payload); err != nil {
		t.Fatal(err)
	}
	if !sawTemp {
		t.Fatal("Put did not go through a temp file")
	}
	c.beforeRename = nil

	// A crashed writer: a half-written temp file for another key.
	k2 := NewKey(KeyInput{Source: "other"})
	half := Encode(k2, payload)[:1000]
	if err := os.WriteFile(filepath.Join(c.Dir(), tempPrefix+k2.String()[:16]+"-123"), half, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(k2); ok {
		t.Error("a temp file was read as an entry")
	}
	if got, ok := c.Get(testKey); !ok || !bytes.Equal(got, payload) {
		t.Error("the finished entry is not readable")
	}
}

func TestConcurrentGetOrCompileCompilesOnce(t *testing.T) {
	c := New(t.TempDir())
	var compiles atomic.Int32
	release := make(chan struct{})
	const n = 16
	var wg sync.WaitGroup
	results := make([][]byte, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = c.GetOrCompile(testKey, func() ([]byte, error) {
				compiles.Add(1)
				<-release // hold the compile until every caller is waiting
				return []byte("cubin"), nil
			})
		}()
	}
	// Let the goroutines pile up on the flight, then finish the compile.
	deadline := time.Now().Add(5 * time.Second)
	for compiles.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if got := compiles.Load(); got != 1 {
		t.Errorf("compiled %d times, want 1", got)
	}
	for i := range n {
		if errs[i] != nil || string(results[i]) != "cubin" {
			t.Errorf("caller %d: %q, %v", i, results[i], errs[i])
		}
	}
	results[0][0] = 'X' // callers own their slices
	for i := 1; i < n; i++ {
		if string(results[i]) != "cubin" {
			t.Errorf("caller %d shares caller 0's slice", i)
		}
	}
	// A later call hits the disk.
	got, err := c.GetOrCompile(testKey, func() ([]byte, error) { t.Error("recompiled a cached kernel"); return nil, nil })
	if err != nil || string(got) != "cubin" {
		t.Errorf("cached GetOrCompile = %q, %v", got, err)
	}
}

func TestCompileErrorNotCached(t *testing.T) {
	c := New(t.TempDir())
	boom := errors.New("axpy.cu(4): error: expected a \";\"")
	if _, err := c.GetOrCompile(testKey, func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the compile error", err)
	}
	if _, ok := c.Get(testKey); ok {
		t.Error("a failed compile was cached")
	}
	got, err := c.GetOrCompile(testKey, func() ([]byte, error) { return []byte("ok"), nil })
	if err != nil || string(got) != "ok" {
		t.Errorf("retry = %q, %v", got, err)
	}
}

func TestUnwritableDir(t *testing.T) {
	// A folder under a regular file cannot be made, even by root.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := New(filepath.Join(file, "kernels"))
	var logged bytes.Buffer
	c.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	if err := c.Put(testKey, []byte("x")); err == nil {
		t.Fatal("Put into an unmakeable folder succeeded")
	}
	got, err := c.GetOrCompile(testKey, func() ([]byte, error) { return []byte("cubin"), nil })
	if err != nil || string(got) != "cubin" {
		t.Fatalf("GetOrCompile = %q, %v; want the compiled data and no error", got, err)
	}
	if !strings.Contains(logged.String(), "storing compiled kernel failed") || !strings.Contains(logged.String(), "not a directory") {
		t.Errorf("the write error was not logged: %q", logged.String())
	}
	// Without a logger the call still succeeds.
	c.Logger = nil
	if got, err := c.GetOrCompile(testKey, func() ([]byte, error) { return []byte("cubin"), nil }); err != nil || string(got) != "cubin" {
		t.Fatalf("GetOrCompile without a logger = %q, %v", got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := Encode(testKey, []byte("payload"))
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"short magic", []byte("EMB"), ErrTruncated},
		{"foreign", []byte("hello, world, this is long enough for a header......"), ErrForeign},
		{"short foreign", []byte("xy"), ErrForeign},
		{"short header", good[:HeaderSize-1], ErrTruncated},
		{"short payload", good[:len(good)-1], ErrTruncated},
		{"long", append(bytes.Clone(good), 'x'), ErrCorrupt},
	} {
		if _, err := Decode(testKey, c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	bad := bytes.Clone(good)
	sum := sha256.Sum256([]byte("other"))
	copy(bad[sumAt:], sum[:])
	if _, err := Decode(testKey, bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("checksum: err = %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(testKey, []byte("abc")))
	f.Add(Encode(testKey, nil))
	f.Add([]byte("EMBERK02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		payload, err := Decode(testKey, data)
		if err != nil {
			if payload != nil {
				t.Fatal("payload with an error")
			}
			return
		}
		// Anything Decode accepts is exactly what Encode makes of its payload.
		if !bytes.Equal(Encode(testKey, payload), data) {
			t.Fatalf("Decode accepted %x, which Encode would not produce", data)
		}
	})
}
