//go:build !linux

package smi

import "io"

// IsTerminal reports false off Linux, where ember smi has no NVML to show.
func IsTerminal(w io.Writer) bool { return false }
