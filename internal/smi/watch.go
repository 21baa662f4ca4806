package smi

import (
	"bytes"
	"context"
	"io"
	"time"
)

// ANSI sequences for redrawing in place.
const (
	cursorHome   = "\x1b[H"
	clearScreen  = "\x1b[2J"
	clearToEOL   = "\x1b[K"
	clearToEnd   = "\x1b[J"
	minWatchTick = 10 * time.Millisecond
)

// Watch draws frame now and then every interval until ctx is done, which is
// not an error. On a terminal (tty) each frame replaces the previous one in
// place; otherwise the frames are written one after another, like
// nvidia-smi -l. A frame's error ends the watch and is returned.
func Watch(ctx context.Context, w io.Writer, interval time.Duration, tty bool, frame func(io.Writer) error) error {
	if interval < minWatchTick {
		interval = minWatchTick
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var buf bytes.Buffer
	for first := true; ; first = false {
		buf.Reset()
		if err := frame(&buf); err != nil {
			return err
		}
		out := buf.Bytes()
		if tty {
			var b bytes.Buffer
			if first {
				b.WriteString(clearScreen)
			}
			b.WriteString(cursorHome)
			b.Write(bytes.ReplaceAll(out, []byte("\n"), []byte(clearToEOL+"\n")))
			b.WriteString(clearToEnd)
			out = b.Bytes()
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		if ctx.Err() != nil { // cancelled during the frame: no further frame, even if a tick is due
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
