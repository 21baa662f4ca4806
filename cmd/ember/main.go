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

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:           "ember",
	Short:         "ember: deep learning in Go on the CPU or NVIDIA GPUs",
	SilenceUsage:  true,
	SilenceErrors: true,
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
