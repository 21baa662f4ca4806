package emu

import (
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	t0 := time.Now()
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %s in %v", l.Path, time.Since(t0))
}
