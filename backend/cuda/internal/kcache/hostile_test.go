package kcache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Another key's valid entry copied into place is a miss, and is dropped.
func TestEntryBoundToKey(t *testing.T) {
	c := New(t.TempDir())
	other := NewKey(KeyInput{Source: "other kernel"})
	if err := c.Put(other, []byte("other's image")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(c.Path(other))
	if err := os.WriteFile(c.Path(testKey), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get(testKey); ok {
		t.Fatalf("another key's entry returned: %q", got)
	}
	if _, err := os.Stat(c.Path(testKey)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("misplaced entry not removed: %v", err)
	}
	if _, err := Decode(testKey, data); !errors.Is(err, ErrWrongKey) {
		t.Errorf("Decode: %v, want ErrWrongKey", err)
	}
}

// A FIFO in an entry's place neither hangs Get nor is kept; a symbolic link
// (to /dev/zero, or to a valid entry elsewhere) is not followed.
func TestGetRefusesSpecialFiles(t *testing.T) {
	c := New(t.TempDir())
	if err := syscall.Mkfifo(c.Path(testKey), 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan bool)
	go func() { _, ok := c.Get(testKey); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Error("FIFO returned as an entry")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Get hangs on a FIFO")
	}
	if _, err := os.Lstat(c.Path(testKey)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("FIFO not removed: %v", err)
	}

	if err := os.Symlink("/dev/zero", c.Path(testKey)); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(testKey); ok {
		t.Error("link to /dev/zero returned")
	}
	elsewhere := filepath.Join(t.TempDir(), "entry")
	os.WriteFile(elsewhere, Encode(testKey, []byte("planted")), 0o600)
	os.Remove(c.Path(testKey))
	os.Symlink(elsewhere, c.Path(testKey))
	if got, ok := c.Get(testKey); ok {
		t.Errorf("symbolic link followed: %q", got)
	}
}

// An entry larger than MaxEntrySize is not read.
func TestGetRefusesHugeEntry(t *testing.T) {
	c := New(t.TempDir())
	f, err := os.Create(c.Path(testKey))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxEntrySize + 1) // sparse: no disk used
	f.Close()
	if _, ok := c.Get(testKey); ok {
		t.Error("huge entry returned")
	}
}

// An entry that passes its checksum but that its user cannot load is
// dropped, compiled again, stored, and loaded.
func TestGetOrCompileUseRebuilds(t *testing.T) {
	c := New(t.TempDir())
	if err := c.Put(testKey, []byte("stale image")); err != nil {
		t.Fatal(err)
	}
	compiles := 0
	var loaded []string
	err := c.GetOrCompileUse(testKey,
		func() ([]byte, error) { compiles++; return []byte("fresh image"), nil },
		func(b []byte) error {
			loaded = append(loaded, string(b))
			if string(b) != "fresh image" {
				return errors.New("CUDA_ERROR_INVALID_IMAGE")
			}
			return nil
		})
	if err != nil || compiles != 1 || strings.Join(loaded, ",") != "stale image,fresh image" {
		t.Fatalf("err %v, %d compiles, loaded %q", err, compiles, loaded)
	}
	if got, ok := c.Get(testKey); !ok || string(got) != "fresh image" {
		t.Errorf("rebuilt entry not stored: %q %v", got, ok)
	}
	// A fresh image that fails too is an error, and nothing is kept.
	c.Drop(testKey)
	err = c.GetOrCompileUse(testKey, func() ([]byte, error) { return []byte("bad"), nil }, func([]byte) error { return errors.New("bad image") })
	if err == nil {
		t.Error("no error for an image that never loads")
	}
	if _, ok := c.Get(testKey); ok {
		t.Error("an image that does not load was kept")
	}
}

// The folder is made 0700; one others may write, or another user's, is
// refused with a reason, and nothing is read from or written to it.
func TestDirPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "kernels")
	c := New(dir)
	if err := c.Put(testKey, []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", st.Mode().Perm())
	}
	st, _ = os.Stat(c.Path(testKey))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("entry mode %v, want 0600", st.Mode().Perm())
	}

	open := t.TempDir()
	os.Chmod(open, 0o777)
	os.WriteFile(filepath.Join(open, testKey.String()+entrySuffix), Encode(testKey, []byte("planted")), 0o644)
	c = New(open)
	if got, ok := c.Get(testKey); ok {
		t.Errorf("entry read from a world-writable folder: %q", got)
	}
	if err := c.Put(testKey, []byte("x")); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("Put into a world-writable folder: %v", err)
	}
	if os.Getuid() == 0 {
		theirs := t.TempDir()
		os.Chown(theirs, 12345, 12345)
		if err := New(theirs).Put(testKey, []byte("x")); err == nil || !strings.Contains(err.Error(), "owned by uid 12345") {
			t.Errorf("Put into another user's folder: %v", err)
		}
	}
	// GetOrCompile still works there, uncached.
	got, err := c.GetOrCompile(testKey, func() ([]byte, error) { return []byte("compiled"), nil })
	if err != nil || !bytes.Equal(got, []byte("compiled")) {
		t.Errorf("GetOrCompile in a refused folder: %q %v", got, err)
	}
}
