package launch

import (
	"bytes"
	"io"
	"sync"
)

// lockedWriter serialises the workers' lines onto one writer, so that lines
// from different workers never interleave mid-line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// maxLine is where a line without a newline is cut and written anyway.
const maxLine = 64 << 10

// prefixWriter writes each complete line it is given to w with prefix in
// front, as one Write. One exec.Cmd copying goroutine writes to it at a
// time; flush (after the worker exited) writes a last unterminated line.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.buf = append(p.buf, b...)
			if len(p.buf) >= maxLine {
				p.emit(nil)
			}
			break
		}
		p.emit(b[:i+1])
		b = b[i+1:]
	}
	// The destination's errors are dropped: a closed stdout of launch's
	// must not cut the workers' pipes and kill them mid-job.
	return n, nil
}

// emit writes prefix, the buffered partial line and rest (which ends in a
// newline, or is nil: then a newline is added).
func (p *prefixWriter) emit(rest []byte) {
	line := make([]byte, 0, len(p.prefix)+len(p.buf)+len(rest)+1)
	line = append(append(append(line, p.prefix...), p.buf...), rest...)
	if rest == nil {
		line = append(line, '\n')
	}
	p.buf = p.buf[:0]
	p.w.Write(line)
}

func (p *prefixWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		p.emit(nil)
	}
}

// tailWriter keeps the last n lines written to it (each cut to 512 bytes).
type tailWriter struct {
	mu      sync.Mutex
	n       int
	done    []string
	partial []byte
}

func newTailWriter(n int) *tailWriter { return &tailWriter{n: n} }

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range b {
		if c == '\n' {
			t.push()
			continue
		}
		if len(t.partial) < 512 {
			t.partial = append(t.partial, c)
		}
	}
	return len(b), nil
}

func (t *tailWriter) push() {
	t.done = append(t.done, string(t.partial))
	if len(t.done) > t.n {
		t.done = t.done[len(t.done)-t.n:]
	}
	t.partial = t.partial[:0]
}

// lines returns the kept lines, the unterminated last one included.
func (t *tailWriter) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.done...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	}
	if len(out) > t.n {
		out = out[len(out)-t.n:]
	}
	return out
}
