package main

import (
	"os"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cliHelper, when set to 1, makes the test binary run main() as `ember`
// instead of the tests: the workers `ember train --ddp --nproc-per-node`
// starts (it launches os.Executable(), which is this binary under test).
const cliHelper = "EMBER_CLI_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(cliHelper) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// resetFlags puts a command's flags back to their defaults, unchanged:
// cobra keeps the values (and Changed) of one Execute for the next.
func resetFlags(t *testing.T, c *cobra.Command) {
	t.Helper()
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		if err := fl.Value.Set(fl.DefValue); err != nil {
			t.Fatalf("resetting --%s: %v", fl.Name, err)
		}
		fl.Changed = false
	})
}
