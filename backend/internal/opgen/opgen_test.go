package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesFresh fails when a file derived from the op table
// differs from what the table generates now.
func TestGeneratedFilesFresh(t *testing.T) {
	fs, err := files()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range fs {
		got, err := os.ReadFile(filepath.Join("..", "..", "..", path))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./backend)", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./backend", path)
		}
	}
}
