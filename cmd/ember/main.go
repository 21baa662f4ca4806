// Command ember is ember's command-line tool: environment checks (info,
// smi), training (train), evaluation and inference (eval, predict,
// generate, tokenize, onnx), benchmarks (bench) and launching distributed
// jobs (launch).
//
// Each subcommand lives in its own file and registers itself on rootCmd in an
// init function, so the command stays thin: flags in, library calls out.
package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/emberml/ember"
	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:           "ember",
	Short:         "ember: deep learning in Go on the CPU or NVIDIA GPUs",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func init() {
	// (at the first Execute: every file's init has added its commands by then)
	cobra.OnInitialize(func() { catchOnce.Do(func() { catchTyped(rootCmd) }) })
}

var catchOnce sync.Once

// catchTyped wraps the RunE of c and its subcommands so that a typed ember
// panic escaping a library call (an error value: *ember.ValueError for a
// batch norm given one sample, *ember.OutOfMemoryError, ...) ends the
// command as a one-line error and exit status 1, not a goroutine trace.
// Go runtime errors still crash: they are ember's bugs.
func catchTyped(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) (err error) {
			if perr := ember.Try(func() { err = run(cmd, args) }); perr != nil {
				return perr
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		catchTyped(sub)
	}
}

// exitError lets a subcommand choose its exit status while still printing a
// message (ember smi exits 9 like nvidia-smi when NVML has no driver, say).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	if err := rootCmd.Execute(); err != nil {
		if ee, ok := err.(*exitError); ok {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, ee.msg)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "ember:", err)
		os.Exit(1)
	}
}
