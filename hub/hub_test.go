package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// payload is a file and the torchvision-style name that carries the first
// 8 hex digits of its real SHA-256.
func payload(n int) ([]byte, string) {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	s := sha256.Sum256(b)
	return b, "resnet18-" + hex.EncodeToString(s[:])[:8] + ".pth"
}

// server serves body at /NAME; mode picks a misbehaviour for the first
// request (later requests are served properly, ranges honoured).
type server struct {
	body     []byte
	mode     string // "", "truncate", "stall", "norange", "404"
	requests atomic.Int32
	ranges   atomic.Int32
	release  chan struct{}
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	if s.mode == "404" {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Range") != "" {
		s.ranges.Add(1)
		if s.mode == "norange" {
			w.Header().Set("Content-Length", fmt.Sprint(len(s.body)))
			w.Write(s.body)
			return
		}
		http.ServeContent(w, r, "f", time.Time{}, bytes.NewReader(s.body))
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(s.body)))
	half := len(s.body) / 2
	switch {
	case n == 1 && (s.mode == "truncate" || s.mode == "norange"):
		w.Write(s.body[:half]) // then the handler returns: the connection is cut short
	case n == 1 && s.mode == "stall":
		w.Write(s.body[:half])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
	default:
		w.Write(s.body)
	}
}

func start(t *testing.T, s *server) *httptest.Server {
	s.release = make(chan struct{})
	ts := httptest.NewServer(s)
	t.Cleanup(func() { close(s.release); ts.Close() })
	return ts
}

func quiet() Option { return Progress(nil) }

func noFiles(t *testing.T, dir string, keep ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".lock") {
			continue // download's lock file stays, as huggingface_hub's
		}
		if !strings.Contains(strings.Join(keep, " "), e.Name()) {
			t.Errorf("unexpected file %s in the cache", e.Name())
		}
	}
}

func TestCompleteDownload(t *testing.T) {
	body, name := payload(300 << 10)
	s := &server{body: body}
	ts := start(t, s)
	dir := t.TempDir()
	var bar bytes.Buffer
	p, err := CachedFile(context.Background(), ts.URL+"/models/"+name, Dir(dir), Progress(&bar))
	if err != nil {
		t.Fatal(err)
	}
	if p != filepath.Join(dir, name) {
		t.Errorf("path %s", p)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, body) {
		t.Error("content differs")
	}
	if !strings.Contains(bar.String(), name) || !strings.Contains(bar.String(), "100%") {
		t.Errorf("progress bar output %q", bar.String())
	}
	noFiles(t, dir, name)
	// cached now: no second request
	if _, err := CachedFile(context.Background(), ts.URL+"/models/"+name, Dir(dir), quiet()); err != nil {
		t.Fatal(err)
	}
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestTruncatedDownloadResumes(t *testing.T) {
	body, name := payload(200 << 10)
	s := &server{body: body, mode: "truncate"}
	ts := start(t, s)
	dir := t.TempDir()
	_, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
	if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("err = %v, want unexpected EOF", err)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a truncated download reached the cache")
	}
	st, err := os.Stat(filepath.Join(dir, name+".partial"))
	if err != nil || st.Size() != int64(len(body)/2) {
		t.Fatalf("partial file: %v %v", st, err)
	}
	p, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, body) {
		t.Error("resumed content differs")
	}
	if s.ranges.Load() != 1 {
		t.Errorf("%d range requests, want 1", s.ranges.Load())
	}
	noFiles(t, dir, name)
}

func TestResumeRestartsWhenRangeIgnored(t *testing.T) {
	body, name := payload(100 << 10)
	s := &server{body: body, mode: "norange"}
	ts := start(t, s)
	dir := t.TempDir()
	if _, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet()); err == nil {
		t.Fatal("no error from a cut connection")
	}
	p, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, body) { // 200 to a range request: started over, not appended
		t.Errorf("restarted content differs (%d bytes, want %d)", len(got), len(body))
	}
	noFiles(t, dir, name)
}

func TestWrongHashRefused(t *testing.T) {
	body, _ := payload(50 << 10)
	name := "resnet18-00000000.pth"
	ts := start(t, &server{body: body})
	dir := t.TempDir()
	_, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
	var he *HashError
	if !errors.As(err, &he) || he.Want != "00000000" || !strings.Contains(err.Error(), "does not start with 00000000") {
		t.Fatalf("err = %v, want a HashError", err)
	}
	s := sha256.Sum256(body)
	if he.Got != hex.EncodeToString(s[:]) {
		t.Errorf("reported hash %s", he.Got)
	}
	noFiles(t, dir) // neither the file nor its partial

	// a file already in the cache whose content disagrees with its name
	if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = CachedFile(context.Background(), "http://127.0.0.1:9/"+name, Dir(dir), quiet())
	if !errors.As(err, &he) || he.Path != filepath.Join(dir, name) || !strings.Contains(err.Error(), "refusing to load it") {
		t.Fatalf("cached file: err = %v", err)
	}
}

func Test404(t *testing.T) {
	_, name := payload(10)
	ts := start(t, &server{mode: "404"})
	dir := t.TempDir()
	_, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 404 || !strings.Contains(err.Error(), "404 Not Found") {
		t.Fatalf("err = %v", err)
	}
	noFiles(t, dir)
}

func TestStalledConnectionTimesOutAndResumes(t *testing.T) {
	body, name := payload(120 << 10)
	s := &server{body: body, mode: "stall"}
	ts := start(t, s)
	dir := t.TempDir()
	t0 := time.Now()
	_, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet(), IdleTimeout(200*time.Millisecond))
	var se *StallError
	if !errors.As(err, &se) || se.Received != int64(len(body)/2) {
		t.Fatalf("err = %v, want a StallError after %d bytes", err, len(body)/2)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("the stall took %v to notice", d)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a stalled download reached the cache")
	}
	p, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet(), IdleTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, body) || s.ranges.Load() != 1 {
		t.Errorf("resumed: equal %v, %d range requests", bytes.Equal(got, body), s.ranges.Load())
	}
}

func TestStalledHeaders(t *testing.T) {
	block := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(block)
	_, err := CachedFile(context.Background(), ts.URL+"/x-abcd.pth", Dir(t.TempDir()), quiet(), IdleTimeout(100*time.Millisecond))
	var se *StallError
	if !errors.As(err, &se) || se.Received != 0 {
		t.Fatalf("err = %v", err)
	}
}

func TestCorruptPartialIsDeleted(t *testing.T) {
	// a partial file from another download: resuming completes a file with
	// the wrong hash, which is deleted; the next attempt starts clean
	body, name := payload(40 << 10)
	ts := start(t, &server{body: body})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, name+".partial"), bytes.Repeat([]byte{7}, 1000), 0o644)
	_, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
	var he *HashError
	if !errors.As(err, &he) {
		t.Fatalf("err = %v", err)
	}
	noFiles(t, dir)
	if _, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet()); err != nil {
		t.Fatal(err)
	}
}

func TestOffline(t *testing.T) {
	body, name := payload(1000)
	s := &server{body: body}
	ts := start(t, s)
	for _, v := range []string{"EMBER_OFFLINE", "HF_HUB_OFFLINE"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, "1")
			dir := t.TempDir()
			_, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
			var oe *OfflineError
			want := filepath.Join(dir, name)
			if !errors.As(err, &oe) || oe.Var != v || oe.Path != want || !strings.Contains(err.Error(), "expected the file at "+want) {
				t.Fatalf("err = %v", err)
			}
			if s.requests.Load() != 0 {
				t.Fatal("offline mode made a request")
			}
			os.WriteFile(want, body, 0o644) // present: fine offline
			if p, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet()); err != nil || p != want {
				t.Fatalf("%s %v", p, err)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	t.Setenv("TORCH_HOME", "/x/torch")
	if d := CheckpointsDir(); d != "/x/torch/hub/checkpoints" {
		t.Error(d)
	}
	t.Setenv("TORCH_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "/c")
	if d := CheckpointsDir(); d != "/c/torch/hub/checkpoints" {
		t.Error(d)
	}
	if d := HFHubCache(); d != "/c/huggingface/hub" {
		t.Error(d)
	}
	t.Setenv("HF_HOME", "/h")
	if d := HFHubCache(); d != "/h/hub" {
		t.Error(d)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if d := TorchHome(); d != "/home/u/.cache/torch" {
		t.Error(d)
	}
	for in, want := range map[string]string{"resnet18-f37072fd.pth": "f37072fd", "resnet50-11ad3fa6.pth": "11ad3fa6",
		"model.pth": "", "vit_b_16-c867db91.pth": "c867db91", "a-B12.pth": ""} {
		if got := HashPrefix(in); got != want {
			t.Errorf("HashPrefix(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestHFSnapshot(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HF_HOME", home)
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HUGGINGFACE_HUB_CACHE", "")
	commit := strings.Repeat("ab", 20)
	other := strings.Repeat("cd", 20)
	base := filepath.Join(home, "hub", "models--openai-community--gpt2")
	for _, c := range []string{commit, other} {
		os.MkdirAll(filepath.Join(base, "snapshots", c), 0o755)
	}
	os.MkdirAll(filepath.Join(base, "refs"), 0o755)
	os.WriteFile(filepath.Join(base, "refs", "main"), []byte(commit+"\n"), 0o644)
	os.MkdirAll(filepath.Join(home, "hub", "models--gpt2", "snapshots", other), 0o755)
	os.MkdirAll(filepath.Join(home, "hub", "models--gpt2", "refs"), 0o755)
	os.WriteFile(filepath.Join(home, "hub", "models--gpt2", "refs", "main"), []byte(other), 0o644)

	if p, err := HFSnapshot("openai-community/gpt2"); err != nil || p != filepath.Join(base, "snapshots", commit) {
		t.Errorf("%s %v", p, err)
	}
	if p, err := HFSnapshot("gpt2"); err != nil || p != filepath.Join(home, "hub", "models--gpt2", "snapshots", other) {
		t.Errorf("%s %v", p, err)
	}
	if p, err := HFSnapshot("openai-community/gpt2", HFRevision(other)); err != nil || !strings.HasSuffix(p, other) {
		t.Errorf("by commit: %s %v", p, err)
	}
	var nc *NotCachedError
	if _, err := HFSnapshot("bert-base-uncased"); !errors.As(err, &nc) || !strings.Contains(err.Error(), "models--bert-base-uncased") {
		t.Errorf("absent: %v", err)
	}
	if _, err := HFSnapshot("gpt2", "v2"); !errors.As(err, &nc) {
		t.Errorf("absent ref: %v", err)
	}
	if _, err := HFSnapshot("../etc"); err == nil {
		t.Error("accepted ../etc")
	}
	t.Setenv("HF_HUB_CACHE", filepath.Join(home, "hub"))
	t.Setenv("HF_HOME", "/nowhere")
	if _, err := HFSnapshot("gpt2"); err != nil {
		t.Errorf("HF_HUB_CACHE: %v", err)
	}
}

// Processes fetching the same checkpoint at once (the ranks of a
// data-parallel job on one machine, each loading --pretrained) take turns
// on the partial file: one downloads, the others wait and then find the
// file cached. They used to write, truncate and rename one shared
// .partial file under each other, failing with a missing file or a hash
// mismatch. (Each call opens the file itself, so goroutines contend as
// processes do.)
func TestConcurrentDownloadsShareOne(t *testing.T) {
	body, name := payload(2 << 20)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		for i := 0; i < len(body); i += 64 << 10 {
			w.Write(body[i:min(i+64<<10, len(body))])
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
	})
	ts := httptest.NewServer(slow)
	defer ts.Close()
	dir := t.TempDir()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			p, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
			if err == nil {
				if got, _ := os.ReadFile(p); !bytes.Equal(got, body) {
					err = fmt.Errorf("%s differs from the served file", p)
				}
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	noFiles(t, dir, name)
}

// The lock is a file of its own: a download that fails before writing
// anything removes its partial file, and one waiting on the lock then,
// or one arriving after, still downloads the whole file into the cache.
// With the lock on the partial file itself, the waiter locked a removed
// file and failed to rename it ('no such file or directory').
func TestDownloadAfterFailedOne(t *testing.T) {
	body, name := payload(1 << 20)
	var calls atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			time.Sleep(150 * time.Millisecond)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		for i := 0; i < len(body); i += 64 << 10 {
			w.Write(body[i:min(i+64<<10, len(body))])
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	})
	ts := httptest.NewServer(h)
	defer ts.Close()
	dir := t.TempDir()
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, delay := range []time.Duration{0, 30 * time.Millisecond, 250 * time.Millisecond} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			p, err := CachedFile(context.Background(), ts.URL+"/"+name, Dir(dir), quiet())
			if err == nil {
				if got, _ := os.ReadFile(p); !bytes.Equal(got, body) {
					err = fmt.Errorf("%s differs from the served file", p)
				}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	var he *HTTPError
	if !errors.As(errs[0], &he) || he.Status != 500 {
		t.Errorf("first download: %v, want the server's 500", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("download %d: %v", i+2, err)
		}
	}
	noFiles(t, dir, name)
}
