//go:build unix

package kcache

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openNoFollow opens p for reading without following a final symbolic link
// and without blocking on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// dirSafe refuses a folder not owned by the user or writable by others.
func dirSafe(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("not a folder")
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d); set EMBER_CACHE_DIR to a folder of your own", sys.Uid, os.Getuid())
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("writable by others (mode %v); chmod go-w it or set EMBER_CACHE_DIR to a folder of your own", st.Mode().Perm())
	}
	return nil
}
