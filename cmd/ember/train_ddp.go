package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/dist"
	"github.com/emberml/ember/internal/launch"
	"github.com/emberml/ember/nn"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file is `ember train --ddp`: joining the process group, the device
// of each rank, the statistics summed over the ranks, and
// --nproc-per-node, which launches the workers itself.

// ddpJob is this process's place in an `ember train --ddp` job.
type ddpJob struct {
	g   *dist.ProcessGroup
	dev ember.Device
}

// ddpDevice is the device of the worker with local rank local: for "auto",
// cuda:local when this machine has GPUs (an error when it has fewer than
// local+1) and cpu otherwise; for "cuda", cuda:local; else the device named.
func ddpDevice(flag string, local int) (ember.Device, error) {
	switch flag {
	case "auto":
		n := ember.DeviceCount()
		if n == 0 {
			return ember.CPU, nil
		}
		if local >= n {
			return ember.CPU, fmt.Errorf("--ddp: local rank %d but this machine has %d GPU(s): launch at most %d workers here, or pass --device cpu", local, n, n)
		}
		return ember.CUDA(local), nil
	case "cuda":
		d := ember.CUDA(local)
		return d, ember.CheckDevice(d)
	}
	return pickDevice(flag)
}

// ddpBackend is the process group's backend for --backend flag on dev.
func ddpBackend(flag string, dev ember.Device) (string, error) {
	switch flag {
	case "auto":
		if dev.Type == ember.CUDAType {
			return "nccl", nil
		}
		return "cpu", nil
	case "nccl", "cpu", "gloo":
		return flag, nil
	}
	return "", fmt.Errorf("--backend %q: want auto, nccl or cpu", flag)
}

// joinJob joins the process group the environment describes (see
// `ember launch --help`), on the device of this worker.
func joinJob(deviceFlag, backendFlag string) (*ddpJob, error) {
	env, err := dist.EnvOptions()
	if errors.Is(err, dist.ErrNoLaunchEnv) {
		return nil, fmt.Errorf("--ddp: %w (or add --nproc-per-node N)", err)
	} else if err != nil {
		return nil, fmt.Errorf("--ddp: %w", err)
	}
	dev, err := ddpDevice(deviceFlag, env.LocalRank)
	if err != nil {
		return nil, err
	}
	backend, err := ddpBackend(backendFlag, dev)
	if err != nil {
		return nil, err
	}
	g, err := dist.InitProcessGroup(backend, dist.Options{Device: dev}) // the rest from the environment
	if err != nil {
		return nil, fmt.Errorf("--ddp: joining the %s process group: %w", backend, err)
	}
	return &ddpJob{g: g, dev: dev}, nil
}

// sum adds v element-wise over the ranks (float64, exact for counts).
func (j *ddpJob) sum(v []float64) ([]float64, error) {
	t := ember.FromSlice(v, ember.Shape{len(v)}, ember.On(j.dev))
	if err := j.g.AllReduce(t, dist.Sum); err != nil {
		return nil, err
	}
	return t.Float64s(), nil
}

// checkInSync fails when the ranks' parameters have drifted apart: under
// DistributedDataParallel every rank applies the same averaged gradients,
// so the sums of their parameters agree (to rounding).
func (j *ddpJob) checkInSync(m nn.Module, epoch int) error {
	s := 0.0
	for _, p := range m.Parameters() {
		s += p.Sum().Item()
	}
	t := ember.FromSlice([]float64{s, -s}, ember.Shape{2}, ember.On(j.dev))
	if err := j.g.AllReduce(t, dist.Max); err != nil {
		return err
	}
	mm := t.Float64s()
	hi, lo := mm[0], -mm[1]
	if hi-lo > 1e-5*math.Max(1, math.Abs(hi)) {
		return fmt.Errorf("--ddp: after epoch %d the ranks' parameters differ (their sums range from %.9g to %.9g): the replicas are out of sync", epoch, lo, hi)
	}
	return nil
}

// selfLaunch is `ember train --ddp --nproc-per-node N`: it runs N copies of
// this command, without --nproc-per-node, under launch.Run, as `ember
// launch --nproc-per-node N -- ember train ...` would.
func selfLaunch(cmd *cobra.Command, nproc string) error {
	if os.Getenv("RANK") != "" {
		return errors.New("--nproc-per-node inside a launched job (RANK is set): drop it, the launcher already started the workers")
	}
	n, err := parseNProc(nproc)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--nproc-per-node: finding this program to launch it: %w", err)
	}
	return runLaunch(cmd, launch.Config{NProcPerNode: n, Program: exe, Args: workerArgs(cmd)})
}

// workerArgs is the command line of a worker started by selfLaunch: the
// subcommand and the flags given, --nproc-per-node left out.
func workerArgs(cmd *cobra.Command) []string {
	args := []string{cmd.Name()}
	// VisitAll and Changed, not Visit: Visit lists every flag ever Set,
	// even one whose Changed was cleared since (the tests reset flags so)
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Changed && fl.Name != "nproc-per-node" {
			args = append(args, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	return args
}

// ddpExitCode is the exit status of a training run whose DDP collectives
// failed (a rank died, hung or disagreed).
const ddpExitCode = 3

// catchDDPFailure runs run and turns the panic of a failed DDP collective
// (an *nn.DDPError, a *dist.RankError) into a one-line error that exits
// with ddpExitCode, instead of a panic and its goroutine trace. Other
// panics go on.
func catchDDPFailure(run func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		e, ok := r.(error)
		var de *nn.DDPError
		var re *dist.RankError
		if !ok || !(errors.As(e, &de) || errors.As(e, &re)) {
			panic(r)
		}
		msg := strings.ReplaceAll(e.Error(), "\n", "; ")
		err = &exitError{code: ddpExitCode, msg: "ember train: " + msg}
	}()
	return run()
}
