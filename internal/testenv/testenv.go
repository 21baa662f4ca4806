// Package testenv holds the helpers ember's tests share for deciding whether
// a test that needs an outside library (a Debian package) runs, skips or fails.
package testenv

import (
	"fmt"
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

// MainWithWorkers is a TestMain for tests that re-execute their own binary
// as worker processes: when the environment variable env names a worker,
// it runs workers[name] instead of the tests and exits (status 1 with the
// error on stderr when it fails, 2 for an unknown name); otherwise it runs
// the tests.
func MainWithWorkers(m *testing.M, env string, workers map[string]func() error) {
	if name := os.Getenv(env); name != "" {
		f := workers[name]
		if f == nil {
			fmt.Fprintf(os.Stderr, "no worker %q\n", name)
			os.Exit(2)
		}
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, "worker failed:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
