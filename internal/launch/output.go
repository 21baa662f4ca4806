package launch

import (
	"bytes"
	"io"
	"strings"
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
// front, as one Write. A carriage return also ends a line (progress bars
// redraw their line with it), so such updates show at once, prefixed, and
// redraw in place on a terminal; "\r\n" is one ending. One exec.Cmd copying
// goroutine writes to it at a time; flush (after the worker exited) writes a
// last unterminated line.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mu     sync.Mutex
	buf    []byte
	cr     bool // the last line written ended in '\r'
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	if p.cr && len(b) > 0 && b[0] == '\n' && len(p.buf) == 0 {
		p.w.Write([]byte{'\n'}) // the rest of a "\r\n" split across writes
		b = b[1:]
	}
	p.cr = false
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.buf = append(p.buf, b...)
			if len(p.buf) >= maxLine {
				p.emit(nil)
			}
			break
		}
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		p.cr = b[i] == '\r'
		p.emit(b[:i+1])
		b = b[i+1:]
	}
	// The destination's errors are dropped: a closed stdout of launch's
	// must not cut the workers' pipes and kill them mid-job.
	return n, nil
}

// emit writes prefix, the buffered partial line and rest (which ends in a
// line ending, or is nil: then a newline is added).
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
// A line redrawn with carriage returns (a progress bar) counts as its last
// drawing. The first line of a Go panic or fatal error ("panic: ...",
// which names what failed, such as the rank a collective waited for) is
// kept too: it precedes a goroutine trace longer than the tail.
type tailWriter struct {
	mu      sync.Mutex
	n       int
	panic   string // the first panic line, with its index in the stream
	panicAt int
	count   int // lines pushed
	done    []string
	partial []byte
	drawn   []byte // the partial line before the last '\r'
}

func newTailWriter(n int) *tailWriter { return &tailWriter{n: n} }

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range b {
		switch c {
		case '\n':
			if len(t.partial) == 0 && len(t.drawn) > 0 {
				t.partial = append(t.partial, t.drawn...)
			}
			t.push()
			continue
		case '\r':
			if len(t.partial) > 0 {
				t.drawn = append(t.drawn[:0], t.partial...)
				t.partial = t.partial[:0]
			}
			continue
		}
		if len(t.partial) < 512 {
			t.partial = append(t.partial, c)
		}
	}
	return len(b), nil
}

func (t *tailWriter) push() {
	line := string(t.partial)
	if t.panic == "" && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
		t.panic, t.panicAt = line, t.count
	}
	t.count++
	t.done = append(t.done, line)
	if len(t.done) > t.n {
		t.done = t.done[len(t.done)-t.n:]
	}
	t.partial = t.partial[:0]
	t.drawn = t.drawn[:0]
}

// lines returns the kept lines, the unterminated last one included.
func (t *tailWriter) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.done...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	} else if len(t.drawn) > 0 {
		out = append(out, string(t.drawn))
	}
	if len(out) > t.n {
		out = out[len(out)-t.n:]
	}
	if t.panic != "" && t.panicAt < t.count-len(t.done) {
		// The panic line fell out of the tail: put it first.
		out = append([]string{t.panic, "..."}, out[min(2, len(out)):]...)
	}
	return out
}
