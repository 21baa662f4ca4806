// Package testenv holds the helpers ember's tests share for deciding whether
// a test that needs an outside library (a Debian package) runs, skips or fails.
package testenv

import (
	"os"
	"testing"
)

// RequireLibs reports whether EMBER_REQUIRE_LIBS=1 is set, as in CI, where a
// test that would skip for want of a library must fail instead.
func RequireLibs() bool { return os.Getenv("EMBER_REQUIRE_LIBS") == "1" }

// NeedLib skips t (or fails it under EMBER_REQUIRE_LIBS=1) when err is not nil,
// naming the Debian package that provides the missing library.
func NeedLib(t testing.TB, debianPkg string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if RequireLibs() {
		t.Fatalf("EMBER_REQUIRE_LIBS=1 but %s is not usable: %v", debianPkg, err)
	}
	t.Skipf("needs Debian package %s: %v", debianPkg, err)
}
