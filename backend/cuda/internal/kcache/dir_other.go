//go:build !unix

package kcache

import "os"

func openNoFollow(p string) (*os.File, error) { return os.Open(p) }

func isLoop(error) bool { return false }

func dirSafe(string) error { return nil }
