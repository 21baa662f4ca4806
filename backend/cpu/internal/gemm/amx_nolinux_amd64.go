//go:build !linux && amd64 && !purego

package gemm

import "errors"

// requestAMX makes AMX-BF16 usable by this process: ember asks for the
// tile state only on Linux.
func requestAMX() error { return errors.New("gemm: AMX is used only on Linux") }
