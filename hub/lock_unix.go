//go:build unix

package hub

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive advisory lock (flock) on f, polling until
// it is free or ctx is done; waited reports whether another holder made it
// wait. The lock goes with f's closing, or the process's end.
func lockFile(ctx context.Context, f *os.File) (waited bool, err error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return waited, nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return waited, nil // a file system without locks: go on unlocked
		}
		waited = true
		select {
		case <-ctx.Done():
			return waited, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
