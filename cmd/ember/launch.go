package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/launch"
	"github.com/spf13/cobra"
)

var launchFlags struct {
	nproc, masterAddr      string
	nnodes, nodeRank, port int
	grace                  time.Duration
}

var launchCmd = &cobra.Command{
	Use:   "launch --nproc-per-node N [flags] [--] program [args...]",
	Short: "Run a distributed job's workers on this machine, as torchrun does",
	Long: `Launch starts --nproc-per-node copies of program on this machine, each with the
environment contract that dist.InitProcessGroup reads (torchrun's names):

  MASTER_ADDR MASTER_PORT  where rank 0 serves the rendezvous store
  RANK WORLD_SIZE          this worker's rank in the job, and the job's size
  LOCAL_RANK               its rank on this machine (its GPU: cuda:LOCAL_RANK)
  LOCAL_WORLD_SIZE         workers on this machine
  GROUP_RANK NODE_RANK     this machine's rank; GROUP_WORLD_SIZE: machines
  GOMAXPROCS               cores/workers, unless already set

Each line a worker prints comes out prefixed with [rankN]. When a worker
fails (non-zero exit or a signal), launch stops the others (SIGTERM, SIGKILL
after --grace), says which rank failed and why (with the end of its stderr)
and exits with that worker's status (128+signal for a signal). Ctrl-C or
SIGTERM is forwarded to the workers; a second one kills them.

Several machines: run launch on each with the same --nnodes, --master-addr
(node 0's address) and --master-port, and --node-rank 0, 1, ...

As torchrun, a flag not given is read from PET_<NAME> when set
(PET_NPROC_PER_NODE, PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR,
PET_MASTER_PORT), which Kubeflow's PyTorchJob sets in each pod.`,
	Example: `  ember launch --nproc-per-node 4 -- ./train --epochs 5
  ember launch --nproc-per-node gpu ember train --ddp
  ember launch --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --nproc-per-node 8 -- ./train`,
	Args: cobra.MinimumNArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		if err := flagsFromPET(cmd); err != nil {
			return err
		}
		f := launchFlags
		n, err := parseNProc(f.nproc)
		if err != nil {
			return err
		}
		switch { // the library reads 0 as its default; a flag of 0 is a mistake
		case f.nnodes < 1:
			return fmt.Errorf("--nnodes %d: need at least 1 machine", f.nnodes)
		case f.grace < 0:
			return fmt.Errorf("--grace %v: want 0 or more", f.grace)
		}
		return runLaunch(cmd, launch.Config{NProcPerNode: n, NNodes: f.nnodes, NodeRank: f.nodeRank,
			MasterAddr: f.masterAddr, MasterPort: f.port, Program: args[0], Args: args[1:], Grace: f.grace})
	},
}

func init() {
	fl := launchCmd.Flags()
	f := &launchFlags
	fl.StringVar(&f.nproc, "nproc-per-node", "1", `workers on this machine: a number, or "gpu" for one per GPU`)
	fl.IntVar(&f.nnodes, "nnodes", 1, "machines in the job")
	fl.IntVar(&f.nodeRank, "node-rank", 0, "this machine's rank, 0 ≤ node rank < nnodes")
	fl.StringVar(&f.masterAddr, "master-addr", "", "address of node 0 (default 127.0.0.1; required with --nnodes > 1)")
	fl.IntVar(&f.port, "master-port", 0, fmt.Sprintf("rendezvous port (0: a free port on one machine, %d on several)", launch.DefaultPort))
	fl.DurationVar(&f.grace, "grace", launch.DefaultGrace, "time stopping workers get between SIGTERM and SIGKILL")
	// Flags after the program's name are the program's: launch -n 2 ./train --lr 1.
	fl.SetInterspersed(false)
	rootCmd.AddCommand(launchCmd)
}

// flagsFromPET gives each of launch's flags that is not on the command
// line the value of its PET_<NAME> variable, when set (torchrun's rule).
func flagsFromPET(cmd *cobra.Command) error {
	for _, name := range []string{"nproc-per-node", "nnodes", "node-rank", "master-addr", "master-port"} {
		env := "PET_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		v, ok := os.LookupEnv(env)
		if !ok || cmd.Flags().Changed(name) {
			continue
		}
		if err := cmd.Flags().Set(name, v); err != nil {
			return fmt.Errorf("--%s from %s=%q: %w", name, env, v, err)
		}
	}
	return nil
}

// parseNProc reads --nproc-per-node: a count, or "gpu" for one worker per
// GPU (an error without one).
func parseNProc(s string) (int, error) {
	if s == "gpu" {
		n := ember.DeviceCount()
		if n == 0 {
			return 0, fmt.Errorf("--nproc-per-node gpu: no usable GPU (%v)", ember.CheckDevice(ember.CUDA(0)))
		}
		return n, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--nproc-per-node %q: want a number ≥ 1 or \"gpu\"", s)
	}
	return n, nil
}

// runLaunch runs the job with the command's output streams, forwarding
// SIGINT and SIGTERM to the workers, and turns a failure into launch's
// exit status.
func runLaunch(cmd *cobra.Command, c launch.Config) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	c.Signals = sigs
	c.Stdout, c.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	err := launch.Run(context.Background(), c)
	var st interface{ ExitStatus() int }
	if errors.As(err, &st) {
		return &exitError{code: st.ExitStatus(), msg: "ember launch: " + err.Error()}
	}
	return err
}
