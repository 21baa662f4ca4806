// Package kcache is the on-disk cache of compiled CUDA kernels (CUBIN or PTX
// images produced by NVRTC), so that a process does not recompile what an
// earlier one already compiled.
//
// The cache lives in EMBER_CACHE_DIR when that is set, else in
// os.UserCacheDir()/ember/kernels. Each entry is one file named by its key's
// hex digest, holding an 80-byte header (the magic "EMBERK02", the key, the
// payload's length as a little-endian uint64, the payload's SHA-256) and the
// payload. Entries are written atomically: a temporary file in the same
// folder, fsynced, then renamed over the entry. A missing, truncated,
// corrupt or foreign entry, or another key's entry copied into place, is a
// miss (and is removed); it is never returned. An entry that passes those
// checks but that its user cannot load is dropped and rebuilt
// (GetOrCompileUse).
//
// The cache treats its folder as shared with other users: entries are
// opened without following symbolic links, must be regular files of at
// most MaxEntrySize bytes, and the folder is made 0700 and refused (with a
// logged reason; compiling goes on uncached) when it is not owned by the
// user or is writable by others.
package kcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// FormatVersion is part of every key: bump it when the entry format or
// anything else that changes compiled output without changing the key's
// other inputs changes.
const FormatVersion = 2

// Magic opens every entry file.
const Magic = "EMBERK02"

// HeaderSize is the size of an entry's header: magic, key, length, SHA-256.
const HeaderSize = len(Magic) + sha256.Size + 8 + sha256.Size

// MaxEntrySize bounds an entry file (a module image is a few MiB).
const MaxEntrySize = 256 << 20

// entrySuffix names entry files; temporary files never end with it.
const entrySuffix = ".kc"

// tempPrefix names temporary files while they are being written.
const tempPrefix = ".tmp-"

// Key identifies one compiled kernel.
type Key [sha256.Size]byte

// String returns the key's hex digest (the entry's file name, less suffix).
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// KeyInput is what a compiled kernel depends on.
type KeyInput struct {
	Source       string   // the CUDA C++ source
	Options      []string // the compiler options, in order
	Arch         string   // the target, e.g. "sm_90"
	NVRTCVersion string   // the compiler's version, e.g. "11.8"
}

// NewKey hashes in (and FormatVersion) into a Key. Every field is
// length-prefixed, so no two distinct inputs hash the same bytes.
func NewKey(in KeyInput) Key {
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(fmt.Sprintf("ember kernel cache format %d", FormatVersion))
	put(in.Source)
	put(fmt.Sprint(len(in.Options)))
	for _, o := range in.Options {
		put(o)
	}
	put(in.Arch)
	put(in.NVRTCVersion)
	var k Key
	h.Sum(k[:0])
	return k
}

const (
	keyAt = len(Magic)
	lenAt = keyAt + sha256.Size
	sumAt = lenAt + 8
)

// Encode returns the entry file's bytes for key's payload.
func Encode(key Key, payload []byte) []byte {
	out := make([]byte, HeaderSize, HeaderSize+len(payload))
	copy(out, Magic)
	copy(out[keyAt:], key[:])
	binary.LittleEndian.PutUint64(out[lenAt:], uint64(len(payload)))
	sum := sha256.Sum256(payload)
	copy(out[sumAt:], sum[:])
	return append(out, payload...)
}

// Errors Decode returns.
var (
	ErrForeign   = errors.New("kcache: not an ember kernel cache entry (bad magic)")
	ErrTruncated = errors.New("kcache: entry truncated")
	ErrCorrupt   = errors.New("kcache: entry corrupt")
	ErrWrongKey  = errors.New("kcache: entry holds another key")
)

// Decode checks an entry file's bytes for key and returns its payload (a
// sub-slice of data). A short or foreign header, another key, a length that
// disagrees with the file's size, or a checksum mismatch is an error.
func Decode(key Key, data []byte) ([]byte, error) {
	if len(data) < len(Magic) {
		if bytes.HasPrefix([]byte(Magic), data) {
			return nil, ErrTruncated
		}
		return nil, ErrForeign
	}
	if string(data[:len(Magic)]) != Magic {
		return nil, ErrForeign
	}
	if len(data) < HeaderSize {
		return nil, ErrTruncated
	}
	if !bytes.Equal(data[keyAt:lenAt], key[:]) {
		return nil, ErrWrongKey
	}
	n := binary.LittleEndian.Uint64(data[lenAt:])
	body := data[HeaderSize:]
	switch {
	case uint64(len(body)) < n:
		return nil, fmt.Errorf("%w: %d of %d payload bytes", ErrTruncated, len(body), n)
	case uint64(len(body)) > n:
		return nil, fmt.Errorf("%w: %d bytes after a %d-byte payload", ErrCorrupt, uint64(len(body))-n, n)
	}
	sum := sha256.Sum256(body)
	if !bytes.Equal(sum[:], data[sumAt:HeaderSize]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return body, nil
}

// DefaultDir returns EMBER_CACHE_DIR, or os.UserCacheDir()/ember/kernels.
func DefaultDir() (string, error) {
	if d := os.Getenv("EMBER_CACHE_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("kcache: no cache folder (set EMBER_CACHE_DIR): %w", err)
	}
	return filepath.Join(base, "ember", "kernels"), nil
}

// Cache is a folder of entries. Its methods are safe for concurrent use, and
// several processes may share one folder.
type Cache struct {
	dir string

	// Logger, when set, receives what the cache cannot report through a
	// return value: entries dropped as corrupt, writes that failed inside
	// GetOrCompile.
	Logger *slog.Logger

	mu       sync.Mutex
	inflight map[Key]*flight
	dirErr   error // why the folder is refused, once checked
	dirOK    bool

	beforeRename func(tmp string) // test hook
}

type flight struct {
	done chan struct{}
	data []byte
	err  error
}

// New returns the cache kept in dir; the folder is made on the first Put.
func New(dir string) *Cache { return &Cache{dir: dir} }

// Default returns the cache in DefaultDir.
func Default() (*Cache, error) {
	d, err := DefaultDir()
	if err != nil {
		return nil, err
	}
	return New(d), nil
}

// Dir returns the cache's folder.
func (c *Cache) Dir() string { return c.dir }

// Path returns the file that holds key's entry.
func (c *Cache) Path(key Key) string { return filepath.Join(c.dir, key.String()+entrySuffix) }

func (c *Cache) logf(level slog.Level, msg string, args ...any) {
	if c.Logger != nil {
		c.Logger.Log(context.Background(), level, msg, args...)
	}
}

// checkDir makes the folder (0700) when it is missing and refuses one that
// is not the user's or that others may write; the answer is kept.
func (c *Cache) checkDir() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirOK || c.dirErr != nil {
		return c.dirErr
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("kcache: %w", err)
	}
	if err := dirSafe(c.dir); err != nil {
		c.dirErr = fmt.Errorf("kcache: not using %s: %w", c.dir, err)
		c.logf(slog.LevelWarn, "kcache: cache folder refused; kernels are compiled uncached", "err", c.dirErr)
		return c.dirErr
	}
	c.dirOK = true
	return nil
}

// Get returns key's payload. A missing entry is a miss; a truncated,
// corrupt or foreign one, another key's, or a file that is not a regular
// file of at most MaxEntrySize bytes is a miss too, and is removed.
func (c *Cache) Get(key Key) ([]byte, bool) {
	if c.checkDir() != nil {
		return nil, false
	}
	p := c.Path(key)
	data, err := readEntry(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false
		}
		c.logf(slog.LevelWarn, "kcache: reading entry failed", "path", p, "err", err)
		if errors.Is(err, errNotRegular) || errors.Is(err, errTooLarge) || isLoop(err) {
			c.Drop(key)
		}
		return nil, false
	}
	payload, err := Decode(key, data)
	if err != nil {
		c.logf(slog.LevelWarn, "kcache: dropping bad entry", "path", p, "err", err)
		c.Drop(key)
		return nil, false
	}
	return payload, true
}

// Drop removes key's entry, if any.
func (c *Cache) Drop(key Key) {
	p := c.Path(key)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.logf(slog.LevelWarn, "kcache: removing bad entry failed", "path", p, "err", err)
	}
}

var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = fmt.Errorf("larger than %d bytes", MaxEntrySize)
)

// readEntry reads the regular file p, not following a symbolic link, not
// blocking on a FIFO, and reading at most MaxEntrySize bytes.
func readEntry(p string) ([]byte, error) {
	f, err := openNoFollow(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%v)", p, errNotRegular, st.Mode().Type())
	}
	if st.Size() > MaxEntrySize {
		return nil, fmt.Errorf("%s: %w", p, errTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxEntrySize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxEntrySize {
		return nil, fmt.Errorf("%s: %w", p, errTooLarge)
	}
	return data, nil
}

// Put stores data under key, atomically: readers see the old entry, no
// entry, or the whole new one, never part of it.
func (c *Cache) Put(key Key, data []byte) (err error) {
	if err := c.checkDir(); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, tempPrefix+key.String()[:16]+"-*")
	if err != nil {
		return fmt.Errorf("kcache: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(Encode(key, data)); err != nil {
		return fmt.Errorf("kcache: writing %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("kcache: syncing %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("kcache: closing %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("kcache: %w", err)
	}
	if c.beforeRename != nil {
		c.beforeRename(tmp)
	}
	if err := os.Rename(tmp, c.Path(key)); err != nil {
		return fmt.Errorf("kcache: %w", err)
	}
	// Make the rename durable too; a failure here loses only the cache entry.
	if d, err := os.Open(c.dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// GetOrCompile returns key's payload, calling compile on a miss and storing
// its result. Concurrent calls for one key within the process share a single
// compile (each caller gets its own copy of the payload). A failure to store the result does not fail the call: it is
// reported through Logger. A compile error is returned as is and not cached.
func (c *Cache) GetOrCompile(key Key, compile func() ([]byte, error)) ([]byte, error) {
	if data, ok := c.Get(key); ok {
		return data, nil
	}
	c.mu.Lock()
	if f, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-f.done
		if f.err != nil {
			return nil, f.err
		}
		return bytes.Clone(f.data), nil // each caller owns its slice
	}
	f := &flight{done: make(chan struct{})}
	if c.inflight == nil {
		c.inflight = map[Key]*flight{}
	}
	c.inflight[key] = f
	c.mu.Unlock()

	defer func() {
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
		close(f.done)
	}()
	// Another caller may have finished (and stored) between our miss and
	// our taking the flight.
	if data, ok := c.Get(key); ok {
		f.data = data
		return data, nil
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				// Waiters get an error; this caller gets the panic back.
				f.err = fmt.Errorf("kcache: compile panicked: %v", r)
				panic(r)
			}
		}()
		f.data, f.err = compile()
	}()
	if f.err != nil {
		f.data = nil
		return nil, f.err
	}
	if err := c.Put(key, f.data); err != nil {
		c.logf(slog.LevelWarn, "kcache: storing compiled kernel failed", "key", key.String(), "err", err)
	}
	return f.data, nil
}

// GetOrCompileUse is GetOrCompile followed by use, which loads the payload
// (unpacks it, loads it as a module). When use fails on a payload that came
// from the cache, the entry is dropped, compiled afresh, stored and used
// again: an entry that passes its checksum but cannot be loaded is rebuilt,
// never kept.
func (c *Cache) GetOrCompileUse(key Key, compile func() ([]byte, error), use func([]byte) error) error {
	if data, ok := c.Get(key); ok {
		err := use(data)
		if err == nil {
			return nil
		}
		c.logf(slog.LevelWarn, "kcache: dropping an entry that failed to load; rebuilding", "key", key.String(), "err", err)
		c.Drop(key)
	}
	data, err := c.GetOrCompile(key, compile)
	if err != nil {
		return err
	}
	if err := use(data); err != nil {
		c.Drop(key)
		return err
	}
	return nil
}
