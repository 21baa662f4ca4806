package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// HashError reports a file whose SHA-256 does not start with the prefix its
// name promises. The file is not loaded; a download that fails the check
// is deleted and never enters the cache.
type HashError struct {
	Path, Want, Got string // Got is the full SHA-256 in hex
	URL             string // set when the file was just downloaded (and then deleted)
}

func (e *HashError) Error() string {
	if e.URL != "" {
		return fmt.Sprintf("hub: %s: the download's SHA-256 %s does not start with %s, the hash its name promises: deleted it, nothing was cached", e.URL, e.Got, e.Want)
	}
	return fmt.Sprintf("hub: %s: SHA-256 %s does not start with %s, the hash its name promises: refusing to load it (delete it to download it again)", e.Path, e.Got, e.Want)
}

// OfflineError reports a file that is not in the cache while the network
// is forbidden.
type OfflineError struct {
	URL, Path, Var string
}

func (e *OfflineError) Error() string {
	return fmt.Sprintf("hub: %s is set, so %s is not downloaded; expected the file at %s (copy it there, or unset %s)", e.Var, e.URL, e.Path, e.Var)
}

// HTTPError is a download answered with a status other than 200 or 206.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("hub: GET %s: %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// StallError is a download that received nothing for longer than the idle
// timeout. What had arrived is kept, and the next attempt resumes from it.
type StallError struct {
	URL      string
	Idle     time.Duration
	Received int64
}

func (e *StallError) Error() string {
	return fmt.Sprintf("hub: GET %s: no data for %v after %d bytes (the partial file is kept; trying again resumes)", e.URL, e.Idle, e.Received)
}

// Option configures CachedFile and Download.
type Option func(*options)

type options struct {
	client   *http.Client
	progress io.Writer
	idle     time.Duration
	dir      string
	fileName string
	noHash   bool
}

// Client sets the HTTP client (default http.DefaultClient).
func Client(c *http.Client) Option { return func(o *options) { o.client = c } }

// Progress draws a progress bar on w (nil: none). The default is os.Stderr.
func Progress(w io.Writer) Option { return func(o *options) { o.progress = w } }

// IdleTimeout abandons a download that receives nothing for d (default 30s).
func IdleTimeout(d time.Duration) Option { return func(o *options) { o.idle = d } }

// Dir sets the cache folder (default CheckpointsDir()).
func Dir(dir string) Option { return func(o *options) { o.dir = dir } }

// FileName sets the cached file's name (default: the URL path's last
// element, as torch.hub names it).
func FileName(name string) Option { return func(o *options) { o.fileName = name } }

// NoHashCheck skips the SHA-256 check even when the file name carries a
// prefix (torch.hub's check_hash=False).
func NoHashCheck() Option { return func(o *options) { o.noHash = true } }

func collect(opts []Option) options {
	o := options{client: http.DefaultClient, progress: os.Stderr, idle: 30 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// CachedFile returns the path of rawURL's file in the checkpoint cache,
// downloading it first when it is absent, as
// torch.hub.load_state_dict_from_url(url, check_hash=True) does. A file
// whose name carries a SHA-256 prefix is checked, cached or new: a mismatch
// is a *HashError. Absent while offline: an *OfflineError naming the path.
// Calls fetching one file at once, from one process or several (the ranks
// of a job on one machine), download it once: the others wait for it (on
// Unix, through a lock on the partial file).
func CachedFile(ctx context.Context, rawURL string, opts ...Option) (string, error) {
	o := collect(opts)
	dir := o.dir
	if dir == "" {
		dir = CheckpointsDir()
	}
	name := o.fileName
	if name == "" {
		u, err := url.Parse(rawURL)
		if err != nil {
			return "", fmt.Errorf("hub: %w", err)
		}
		name = path.Base(u.Path)
		if name == "/" || name == "." || name == "" {
			return "", fmt.Errorf("hub: %s names no file", rawURL)
		}
	}
	dst := filepath.Join(dir, name)
	prefix := ""
	if !o.noHash {
		prefix = HashPrefix(name)
	}
	if _, err := os.Stat(dst); err == nil {
		if err := VerifyFile(dst, prefix); err != nil {
			return "", err
		}
		return dst, nil
	}
	if off, v := Offline(); off {
		return "", &OfflineError{URL: rawURL, Path: dst, Var: v}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("hub: %w", err)
	}
	if err := download(ctx, rawURL, dst, prefix, o, true); err != nil {
		return "", err
	}
	return dst, nil
}

// Download fetches rawURL to dst through dst+".partial": an earlier
// partial file is resumed with a range request (or restarted when the
// server does not honour it), the result is checked against hashPrefix
// (when not empty) and renamed to dst only when complete and verified. A
// hash mismatch deletes the partial file; a stall or a cut connection keeps
// it for the next attempt. Download ignores the offline variables.
func Download(ctx context.Context, rawURL, dst, hashPrefix string, opts ...Option) error {
	return download(ctx, rawURL, dst, hashPrefix, collect(opts), false)
}

// VerifyFile checks that path's SHA-256 starts with prefix (nothing to
// check when prefix is empty).
func VerifyFile(path, prefix string) error {
	if prefix == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("hub: %s: %w", path, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if !strings.HasPrefix(got, prefix) {
		return &HashError{Path: path, Want: prefix, Got: got}
	}
	return nil
}

// download fetches rawURL into dst. cached says dst was absent when the
// caller looked (CachedFile): a dst present once the lock is held was
// then put there by another download, and is what is wanted.
func download(ctx context.Context, rawURL, dst, prefix string, o options, cached bool) error {
	// one download at a time per file (the ranks of a job on one machine
	// fetching the same weights): the others wait, then find it done. The
	// lock is on a file of its own, never removed or renamed (as
	// huggingface_hub's), so that every waiter locks the same one
	lock, err := os.OpenFile(dst+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	defer lock.Close() // releases the lock
	waited, err := lockFile(ctx, lock)
	if err != nil {
		return fmt.Errorf("hub: waiting for another download of %s: %w", dst, err)
	}
	if waited || cached {
		if _, err := os.Stat(dst); err == nil {
			return VerifyFile(dst, prefix)
		}
	}
	part := dst + ".partial"
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	have, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	// the idle timer also covers waiting for the response's header
	var stalled atomic.Bool
	timer := time.AfterFunc(o.idle, func() { stalled.Store(true); cancel() })
	defer timer.Stop()
	resp, err := o.client.Do(req)
	if err != nil {
		if stalled.Load() {
			return &StallError{URL: rawURL, Idle: o.idle, Received: have}
		}
		return fmt.Errorf("hub: %w", err)
	}
	defer resp.Body.Close()
	total := int64(-1)
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 && rangeStart(resp.Header.Get("Content-Range")) == have:
		if resp.ContentLength >= 0 {
			total = have + resp.ContentLength
		}
	case resp.StatusCode == http.StatusOK:
		// a fresh start, or a server that ignores ranges: start over
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("hub: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("hub: %w", err)
		}
		have, total = 0, resp.ContentLength
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		// the partial file is as long as the server's (or longer): check it
		// as it is; a wrong one is deleted below and the next try restarts
		total = have
	default:
		if have == 0 {
			f.Close()
			f = nil
			os.Remove(part)
		}
		return &HTTPError{URL: rawURL, Status: resp.StatusCode}
	}
	var bar *progressbar.ProgressBar
	if o.progress != nil && total != have {
		bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(o.progress),
			progressbar.OptionSetDescription(path.Base(dst)), progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionOnCompletion(func() { fmt.Fprintln(o.progress) }))
		bar.Add64(have)
	}
	buf := make([]byte, 256<<10)
	n := have
	for total < 0 || n < total {
		timer.Reset(o.idle)
		k, rerr := resp.Body.Read(buf)
		if k > 0 {
			if _, err := f.Write(buf[:k]); err != nil {
				return fmt.Errorf("hub: %s: %w", part, err)
			}
			n += int64(k)
			if bar != nil {
				bar.Add(k)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if stalled.Load() {
				return &StallError{URL: rawURL, Idle: o.idle, Received: n}
			}
			return fmt.Errorf("hub: GET %s: %w after %d bytes (the partial file is kept; trying again resumes)", rawURL, rerr, n)
		}
	}
	timer.Stop()
	if total >= 0 && n < total {
		return fmt.Errorf("hub: GET %s: %w: %d of %d bytes (the partial file is kept; trying again resumes)", rawURL, io.ErrUnexpectedEOF, n, total)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	// verified and renamed under the lock, so that a waiting download
	// finds dst when it gets the lock
	if err := VerifyFile(part, prefix); err != nil {
		os.Remove(part)
		var he *HashError
		if errors.As(err, &he) {
			he.URL = rawURL
		}
		return err
	}
	if err := os.Rename(part, dst); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	err = f.Close()
	f = nil
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	return nil
}

// rangeStart is the first byte of a "bytes a-b/n" Content-Range, or -1.
func rangeStart(cr string) int64 {
	s, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return -1
	}
	a, _, ok := strings.Cut(s, "-")
	if !ok {
		return -1
	}
	v, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return -1
	}
	return v
}
