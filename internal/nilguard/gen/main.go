// Command gen writes zz_nilguard.go for the package in the current
// directory (go generate runs it there); see package nilguard.
package main

import (
	"fmt"
	"os"

	"github.com/emberml/ember/internal/nilguard"
)

func main() {
	src, err := nilguard.Generate(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(nilguard.File, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
