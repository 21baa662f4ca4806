package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/weights"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

var trainFlags struct {
	model, dataset, device, out, dataDir string
	epochs, batch, limit, workers        int
	lr, momentum, weightDecay            float64
	seed                                 uint64
	resume, quiet, memReport, ddp        bool
	backend, nproc                       string
}

var trainCmd = &cobra.Command{
	Use:   "train",
	Short: "Train an image classifier, writing metrics, a plot and checkpoints",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		return catchDDPFailure(func() error { return runTrain(cmd) })
	},
}

func init() {
	fl := trainCmd.Flags()
	f := &trainFlags
	fl.StringVar(&f.model, "model", "cnn", "cnn or resnet18")
	fl.StringVar(&f.dataset, "dataset", "fashion-mnist", "fashion-mnist, mnist or synthetic (generated: for checking a setup)")
	fl.StringVar(&f.device, "device", "auto", "auto, cpu or cuda:N")
	fl.StringVar(&f.out, "out", "runs/default", "run directory (metrics.csv, plot.png, model.safetensors, optim.safetensors)")
	fl.StringVar(&f.dataDir, "data-dir", "", "dataset directory")
	fl.IntVar(&f.epochs, "epochs", 5, "epochs")
	fl.IntVar(&f.batch, "batch", 64, "batch size (with --ddp: per rank; the effective batch is batch × ranks)")
	fl.IntVar(&f.limit, "limit", 0, "train (and test) on the first N samples only")
	fl.IntVar(&f.workers, "workers", 2, "data loader goroutines")
	fl.Float64Var(&f.lr, "lr", 0.05, "learning rate (SGD with momentum, cosine schedule)")
	fl.Float64Var(&f.momentum, "momentum", 0.9, "SGD momentum")
	fl.Float64Var(&f.weightDecay, "weight-decay", 5e-4, "weight decay")
	fl.Uint64Var(&f.seed, "seed", 0, "seed for initialisation and shuffling")
	fl.BoolVar(&f.resume, "resume", false, "continue from the run directory's checkpoint")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fl.BoolVar(&f.memReport, "mem-report", false, "print ember's memory report to stderr after each epoch")
	fl.BoolVar(&f.ddp, "ddp", false, "DistributedDataParallel, one process per device: run under `ember launch` (or torchrun, srun), or add --nproc-per-node")
	fl.StringVar(&f.backend, "backend", "auto", "with --ddp: auto (nccl on cuda devices, else cpu), nccl or cpu")
	fl.StringVar(&f.nproc, "nproc-per-node", "", `with --ddp: start this many workers here (a number, or "gpu": one per GPU), as ember launch does`)
	rootCmd.AddCommand(trainCmd)
}

type epochRow struct {
	epoch                                  int
	trainLoss, trainAcc, testLoss, testAcc float64
	seconds, samplesPerS                   float64
}

func runTrain(cmd *cobra.Command) error {
	f := trainFlags
	if f.nproc != "" {
		if !f.ddp {
			return errors.New("--nproc-per-node needs --ddp")
		}
		return selfLaunch(cmd, f.nproc)
	}
	// With --ddp every rank trains its share of each epoch; rank 0 alone
	// prints, evaluates and writes the run directory.
	var (
		job       *ddpJob
		dev       ember.Device
		err       error
		rank      = 0
		world     = 1
		out, diag = cmd.OutOrStdout(), cmd.ErrOrStderr()
	)
	if f.ddp {
		if job, err = joinJob(f.device, f.backend); err != nil {
			return err
		}
		defer job.g.Close()
		dev, rank, world = job.dev, job.g.Rank(), job.g.WorldSize()
		if rank != 0 {
			out, diag = io.Discard, io.Discard
		}
	} else if dev, err = pickDevice(f.device); err != nil {
		return err
	}
	lead := rank == 0
	ember.ManualSeed(f.seed)
	m, err := buildModel(f.model)
	if err != nil {
		return err
	}
	trainDS, _, err := loadDataset(f.dataset, true, f.dataDir)
	if err != nil {
		return err
	}
	testDS, _, err := loadDataset(f.dataset, false, f.dataDir)
	if err != nil {
		return err
	}
	if lead {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return err
		}
	}
	trainSet := data.Take(trainDS, f.limit)
	order := data.Shuffle(f.seed)
	if job != nil {
		s := data.NewDistributedSampler(trainSet.Len(), rank, world, data.SamplerOptions{Seed: f.seed})
		order = data.WithSampler(s)
		fmt.Fprintf(out, "ddp: %d ranks (backend %s, rank 0 on %s); batch %d per rank, %d in all; %d of %d samples per rank per epoch\n",
			world, job.g.Backend(), dev, f.batch, f.batch*world, s.Len(), trainSet.Len())
	}
	train := data.NewLoader(trainSet, data.BatchSize(f.batch), order, data.Workers(f.workers))
	test := data.NewLoader(data.Take(testDS, f.limit), data.BatchSize(256), data.Workers(f.workers))
	m.To(dev)
	params := optim.ModuleParams(m)
	opt := optim.NewSGD(params, nil, f.lr, f.momentum, 0, f.weightDecay, false)
	sched := optim.CosineAnnealingLR(opt, f.epochs*train.Len(), 0)
	var rows []epochRow
	start := 0
	modelPath, optPath := filepath.Join(f.out, "model.safetensors"), filepath.Join(f.out, "optim.safetensors")
	if f.resume {
		sd, meta, err := loadWeights(modelPath)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		if err := m.LoadStateDict(sd, true); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		osd, err := weights.LoadSafetensors(optPath)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		if err := opt.LoadStateDict(osd); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		start, _ = strconv.Atoi(meta["epoch"])
		sched.SetStepCount(start * train.Len())
		if lead {
			rows, _ = readMetrics(filepath.Join(f.out, "metrics.csv"))
		}
	}
	model := m // what the training steps run: m, or DistributedDataParallel around it
	if job != nil {
		// rank 0's parameters broadcast to all, gradients averaged over the
		// ranks during Backward
		if model, err = nn.NewDistributedDataParallel(m, nn.WithProcessGroup(job.g)); err != nil {
			return err
		}
	}
	save := func(epoch int) error {
		meta := map[string]string{"model": f.model, "dataset": f.dataset, "epoch": strconv.Itoa(epoch)}
		if err := weights.SaveSafetensorsMeta(modelPath, m.StateDict(), meta); err != nil {
			return err
		}
		return weights.SaveSafetensors(optPath, opt.StateDict())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ce := nn.CrossEntropyLoss{}
	for epoch := start; epoch < f.epochs; epoch++ {
		var bar *progressbar.ProgressBar
		if !f.quiet && lead {
			bar = progressbar.NewOptions(train.Len(), progressbar.OptionSetWriter(diag),
				progressbar.OptionSetDescription(fmt.Sprintf("epoch %d/%d", epoch+1, f.epochs)), progressbar.OptionShowCount())
		}
		t0 := time.Now()
		seen, correct, lossSum := 0, 0, 0.0
		model.Train(true)
		for b := range train.Epoch(epoch) {
			if ctx.Err() != nil {
				break
			}
			x, y := b.Input.To(dev), b.Target.To(dev)
			opt.ZeroGrad()
			out := model.Forward(x)
			loss := ce.Loss(out, y)
			loss.Backward()
			opt.Step()
			sched.Step()
			l := loss.Item()
			pred := out.ArgMaxDim(1, false).Int64s()
			for i, t := range b.Target.Int64s() {
				if pred[i] == t {
					correct++
				}
			}
			seen += b.Size()
			lossSum += l * float64(b.Size())
			if bar != nil {
				bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f acc %.4f %.0f samples/s", epoch+1, f.epochs,
					lossSum/float64(seen), float64(correct)/float64(seen), float64(seen*world)/time.Since(t0).Seconds()))
				bar.Add(1)
			}
		}
		if ctx.Err() != nil {
			if !lead { // rank 0 saves; the parameters are the same on every rank
				return nil
			}
			if bar != nil {
				fmt.Fprintln(diag)
			}
			fmt.Fprintln(diag, "interrupted: saving the checkpoint of the last finished epoch state")
			return save(epoch)
		}
		secs := time.Since(t0).Seconds()
		if job != nil { // the epoch's statistics over all ranks
			sums, err := job.sum([]float64{lossSum, float64(correct), float64(seen)})
			if err != nil {
				return err
			}
			lossSum, correct, seen = sums[0], int(sums[1]), int(sums[2])
			if err := job.checkInSync(m, epoch+1); err != nil {
				return err
			}
		}
		if !lead {
			if err := job.g.Barrier(); err != nil { // rank 0 evaluates and saves
				return err
			}
			continue
		}
		res := evaluate(m, test, dev)
		row := epochRow{epoch + 1, lossSum / float64(seen), float64(correct) / float64(seen), res.loss, res.acc(), secs, float64(seen) / secs}
		rows = append(rows, row)
		if bar != nil {
			fmt.Fprintln(diag) // end the bar's line
		}
		fmt.Fprintf(out, "epoch %d: train loss %.4f acc %.4f | test loss %.4f acc %.4f | %.1fs, %.0f samples/s\n",
			row.epoch, row.trainLoss, row.trainAcc, row.testLoss, row.testAcc, row.seconds, row.samplesPerS)
		if err := writeMetrics(filepath.Join(f.out, "metrics.csv"), rows); err != nil {
			return err
		}
		if err := writePlot(filepath.Join(f.out, "plot.png"), rows); err != nil {
			return err
		}
		if err := save(epoch + 1); err != nil {
			return err
		}
		if f.memReport {
			if err := ember.WriteMemoryReport(diag); err != nil {
				return err
			}
		}
		if job != nil {
			if err := job.g.Barrier(); err != nil {
				return err
			}
		}
	}
	return nil
}

var metricsHeader = []string{"epoch", "train_loss", "train_acc", "test_loss", "test_acc", "seconds", "samples_per_s"}

func writeMetrics(path string, rows []epochRow) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(fh)
	w.Write(metricsHeader)
	g := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	for _, r := range rows {
		w.Write([]string{strconv.Itoa(r.epoch), g(r.trainLoss), g(r.trainAcc), g(r.testLoss), g(r.testAcc), g(r.seconds), g(r.samplesPerS)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func readMetrics(path string) ([]epochRow, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		return nil, err
	}
	var rows []epochRow
	for _, r := range recs[min(1, len(recs)):] {
		if len(r) != len(metricsHeader) {
			continue
		}
		v := make([]float64, len(r))
		for i, s := range r {
			v[i], _ = strconv.ParseFloat(s, 64)
		}
		rows = append(rows, epochRow{int(v[0]), v[1], v[2], v[3], v[4], v[5], v[6]})
	}
	return rows, nil
}

func writePlot(path string, rows []epochRow) error {
	p := plot.New()
	p.Title.Text = "training"
	p.X.Label.Text = "epoch"
	series := func(get func(epochRow) float64) plotter.XYs {
		xy := make(plotter.XYs, len(rows))
		for i, r := range rows {
			xy[i].X, xy[i].Y = float64(r.epoch), get(r)
		}
		return xy
	}
	if err := plotutil.AddLinePoints(p,
		"train loss", series(func(r epochRow) float64 { return r.trainLoss }),
		"test loss", series(func(r epochRow) float64 { return r.testLoss }),
		"train acc", series(func(r epochRow) float64 { return r.trainAcc }),
		"test acc", series(func(r epochRow) float64 { return r.testAcc })); err != nil {
		return err
	}
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
