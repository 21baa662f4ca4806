package main

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
)

// progress shows an epoch's progress: a redrawn bar on a terminal, else
// (a file, a pipe, ember launch's prefixed output) one line every tenth of
// the epoch, so logs stay small.
type progress struct {
	bar      *progressbar.ProgressBar
	w        io.Writer
	label    string
	n, total int
	every    int
	status   string
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, total int, label string) *progress {
	p := &progress{w: w, label: label, total: total, every: max(1, (total+9)/10)}
	if isTerminal(w) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label), progressbar.OptionShowCount())
	}
	return p
}

// add counts one batch; status (if any) describes the epoch so far.
func (p *progress) add(status string) {
	p.n++
	if status != "" {
		p.status = status
	}
	if p.bar != nil {
		if status != "" {
			p.bar.Describe(p.label + " " + status)
		}
		p.bar.Add(1)
		return
	}
	if p.status != "" && (p.n%p.every == 0 || p.n == p.total) {
		fmt.Fprintf(p.w, "%s batch %d/%d %s\n", p.label, p.n, p.total, p.status)
	}
}

// finish ends the bar's line.
func (p *progress) finish() {
	if p.bar != nil {
		fmt.Fprintln(p.w)
	}
}
