//go:build !unix

package hub

import (
	"context"
	"os"
)

// lockFile does nothing where flock is not available: concurrent
// downloads of one file are not coordinated there.
func lockFile(context.Context, *os.File) (bool, error) { return false, nil }
