package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/weights"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// trainOptions are ember train's flags.
type trainOptions struct {
	model, dataset, device, out, dataDir string
	epochs, batch, limit, workers        int
	lr, momentum, weightDecay            float64
	seed                                 uint64
	resume, quiet, memReport, ddp        bool
	backend, nproc                       string
	amp                                  string
}

var trainFlags trainOptions

var trainCmd = &cobra.Command{
	Use:   "train",
	Short: "Train an image classifier or a small GPT, writing metrics, a plot and checkpoints",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		return catchDDPFailure(func() error { return runTrain(cmd) })
	},
}

func init() {
	fl := trainCmd.Flags()
	f := &trainFlags
	fl.StringVar(&f.model, "model", "cnn", "cnn, resnet18, resnet34 (with --dataset imagefolder:DIR), or gpt (a character-level GPT on --dataset text:PATH)")
	fl.StringVar(&f.dataset, "dataset", "fashion-mnist", "fashion-mnist, mnist, synthetic (generated: for checking a setup), imagefolder:DIR (resnet18/34), or text:PATH (gpt)")
	fl.StringVar(&f.device, "device", "auto", "auto, cpu or cuda:N")
	fl.StringVar(&f.out, "out", "runs/default", "run directory (metrics.csv, plot.png, model.safetensors, optim.safetensors)")
	fl.StringVar(&f.dataDir, "data-dir", "", "the folder of the four IDX files (default: $EMBER_DATA_DIR or the Debian package's)")
	fl.IntVar(&f.epochs, "epochs", 5, "epochs")
	fl.IntVar(&f.batch, "batch", 64, "batch size (with --ddp: per rank; the effective batch is batch × ranks; gpt: 32 unless given)")
	fl.IntVar(&f.limit, "limit", 0, "train (and test) on the first N samples only (gpt: about the first N bytes of text)")
	fl.IntVar(&f.workers, "workers", 2, "data loader goroutines")
	fl.Float64Var(&f.lr, "lr", 0.05, "learning rate (SGD with momentum, cosine schedule; gpt: AdamW, 1e-3 unless given)")
	fl.Float64Var(&f.momentum, "momentum", 0.9, "SGD momentum")
	fl.Float64Var(&f.weightDecay, "weight-decay", 5e-4, "weight decay (gpt: 0.1 on the matrices unless given)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed for initialisation and shuffling")
	fl.BoolVar(&f.resume, "resume", false, "continue from the run directory's checkpoint")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fl.BoolVar(&f.memReport, "mem-report", false, "print ember's memory report to stderr after each epoch")
	fl.BoolVar(&f.ddp, "ddp", false, "DistributedDataParallel, one process per device: run under \"ember launch\" (or torchrun, srun), or add --nproc-per-node")
	fl.StringVar(&f.backend, "backend", "auto", "with --ddp: auto (nccl on cuda devices, else cpu), nccl or cpu")
	fl.StringVar(&f.nproc, "nproc-per-node", "", `with --ddp: start this many workers here (a number, or "gpu": one per GPU), as ember launch does`)
	fl.StringVar(&f.amp, "amp", "", "mixed precision: bf16 (autocast to bfloat16) or fp16 (autocast to float16 with a GradScaler); the evaluation runs in float32")
	rootCmd.AddCommand(trainCmd)
}

type epochRow struct {
	epoch                                  int
	trainLoss, trainAcc, testLoss, testAcc float64
	seconds, samplesPerS                   float64
}

func runTrain(cmd *cobra.Command) error {
	f := trainFlags
	if f.model == "gpt" {
		return runTrainGPT(cmd)
	}
	if err := validateTrainFlags(f); err != nil {
		return err
	}
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
	m, trainDS, testDS, extraMeta, err := trainSetup(cmd, f) // train_finetune.go
	if err != nil {
		return err
	}
	var tb *tbLog
	if lead {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return err
		}
		if tb, err = openTensorBoard(f); err != nil {
			return err
		}
		defer tb.close()
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
	if train.Len() == 0 {
		return fmt.Errorf("--dataset %s: the training set has no samples", f.dataset)
	}
	test := data.NewLoader(data.Take(testDS, f.limit), data.BatchSize(256), data.Workers(f.workers))
	m.To(dev)
	params := optim.ModuleParams(m)
	opt := optim.NewSGD(params, nil, f.lr, f.momentum, 0, f.weightDecay, false)
	sched := optim.CosineAnnealingLR(opt, f.epochs*train.Len(), 0)
	var rows []epochRow
	start := 0
	modelPath, optPath := filepath.Join(f.out, "model.safetensors"), filepath.Join(f.out, "optim.safetensors")
	// model/optim.safetensors: the last finished epoch; interrupted*: the
	// position of an interrupt after it (epoch and batches done), if any
	midModel, midOpt := filepath.Join(f.out, "interrupted.safetensors"), filepath.Join(f.out, "interrupted-optim.safetensors")
	skip := 0 // batches of the first epoch already trained
	if f.resume {
		ck, err := pickCheckpoint(modelPath, optPath, midModel, midOpt)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		// the same model on the same data (an image folder may have moved)
		if saved := ck.meta["model"]; saved != "" && saved != f.model {
			return fmt.Errorf("resume: %s was saved by --model %s: resume it with --model %s, or train --model %s in another --out", ck.modelPath, saved, saved, f.model)
		}
		if saved := ck.meta["dataset"]; saved != "" && saved != f.dataset &&
			!(strings.HasPrefix(saved, "imagefolder:") && strings.HasPrefix(f.dataset, "imagefolder:")) {
			return fmt.Errorf("resume: %s was trained on --dataset %s: resume it with --dataset %s, or train on %s in another --out", ck.modelPath, saved, saved, f.dataset)
		}
		if err := m.LoadStateDict(ck.model, true); err != nil {
			return fmt.Errorf("resume: %s: %w", ck.modelPath, err)
		}
		if err := opt.LoadStateDict(ck.optim); err != nil {
			return fmt.Errorf("resume: %s: %w", ck.optPath, err)
		}
		start, skip = ck.epoch, ck.batch
		if skip > 0 { // mid-epoch: the rest of the epoch must be the same samples in the same order
			for _, c := range []struct{ key, flag, now string }{
				{"seed", "--seed", strconv.FormatUint(f.seed, 10)},
				{"batch_size", "--batch", strconv.Itoa(f.batch)},
				{"limit", "--limit", strconv.Itoa(f.limit)},
			} {
				if was, ok := ck.meta[c.key]; ok && was != c.now {
					return fmt.Errorf("resume: %s was saved in the middle of epoch %d with %s %s; resuming it with %s %s would repeat or skip samples (pass %s %s, or delete %s to redo the epoch)",
						ck.modelPath, start+1, c.flag, was, c.flag, c.now, c.flag, was, filepath.Base(ck.modelPath))
				}
			}
		}
		if skip >= train.Len() {
			return fmt.Errorf("resume: %s was saved after batch %d of epoch %d, but an epoch now has %d batches (were --batch or --limit changed?)", ck.modelPath, skip, start+1, train.Len())
		}
		if lead {
			rows, _ = readMetrics(filepath.Join(f.out, "metrics.csv"))
			if skip > 0 {
				fmt.Fprintf(out, "resume: %s: epoch %d from batch %d of %d\n", ck.modelPath, start+1, skip+1, train.Len())
			} else {
				fmt.Fprintf(out, "resume: %s: %d of %d epochs done\n", ck.modelPath, start, f.epochs)
			}
		}
		if start >= f.epochs {
			if lead {
				fmt.Fprintf(out, "nothing to do: the run in %s has finished %d epochs (--epochs %d); raise --epochs to train on\n", f.out, start, f.epochs)
			}
			return nil
		}
		sched.SetStepCount(start*train.Len() + skip) // start < --epochs: no overflow
	}
	model := m // what the training steps run: m, or DistributedDataParallel around it
	if job != nil {
		// rank 0's parameters broadcast to all, gradients averaged over the
		// ranks during Backward
		if model, err = nn.NewDistributedDataParallel(m, nn.WithProcessGroup(job.g)); err != nil {
			return err
		}
	}
	// save writes a checkpoint: after epoch epochs (batch 0) into model/optim,
	// or, after an interrupt, batch batches into epoch into interrupted*,
	// leaving the last end-of-epoch checkpoint as it was
	save := func(epoch, batch int) error {
		meta := map[string]string{"model": f.model, "dataset": f.dataset, "epoch": strconv.Itoa(epoch)}
		for k, v := range extraMeta {
			meta[k] = v
		}
		mp, op := modelPath, optPath
		if batch > 0 { // and what the order of the epoch's samples depends on
			meta["batch"] = strconv.Itoa(batch)
			meta["seed"] = strconv.FormatUint(f.seed, 10)
			meta["batch_size"] = strconv.Itoa(f.batch)
			meta["limit"] = strconv.Itoa(f.limit)
			mp, op = midModel, midOpt
		}
		if err := weights.SaveSafetensorsMeta(mp, m.StateDict(), meta); err != nil {
			return err
		}
		if err := weights.SaveSafetensors(op, opt.StateDict()); err != nil {
			return err
		}
		if batch == 0 { // the interrupted epoch is done now
			for _, p := range []string{midModel, midOpt} {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
		}
		return nil
	}
	ctx, stop := interruptContext()
	defer stop()
	ce := nn.CrossEntropyLoss{}
	// --amp: the forward pass and loss under Autocast; fp16 scales the loss
	// (GradScaler) so that small gradients survive float16.
	var scaler *optim.GradScaler
	forward := func(x, y *ember.Tensor) (out, loss *ember.Tensor) {
		out = model.Forward(x)
		return out, ce.Loss(out, y)
	}
	if f.amp != "" {
		dt := ember.BFloat16
		if f.amp == "fp16" {
			dt, scaler = ember.Float16, optim.NewGradScaler()
		}
		plain := forward
		forward = func(x, y *ember.Tensor) (out, loss *ember.Tensor) {
			ember.Autocast(dev, dt, func() { out, loss = plain(x, y) })
			return out, loss
		}
	}
	for epoch := start; epoch < f.epochs; epoch++ {
		var bar *progress
		if !f.quiet && lead {
			bar = newProgress(diag, train.Len(), fmt.Sprintf("epoch %d/%d", epoch+1, f.epochs))
		}
		t0 := time.Now()
		seen, correct, lossSum := 0, 0, 0.0
		done := 0 // batches of this epoch trained
		model.Train(true)
		applyFreeze(m, epoch)
		for b := range train.Epoch(epoch) {
			if ctx.Err() != nil {
				break
			}
			if skip > 0 { // trained before the interrupt
				skip--
				done++
				if bar != nil {
					bar.add("")
				}
				continue
			}
			x, y := b.Input.To(dev), b.Target.To(dev)
			opt.ZeroGrad()
			out, loss := forward(x, y)
			if scaler != nil {
				scaler.ScaleLoss(loss).Backward()
				scaler.Step(opt)
				scaler.Update()
			} else {
				loss.Backward()
				opt.Step()
			}
			sched.Step()
			l := loss.Item()
			pred := out.ArgMaxDim(1, false).Int64s()
			for i, t := range b.Target.Int64s() {
				if pred[i] == t {
					correct++
				}
			}
			seen += b.Size()
			done++
			if afterBatch != nil {
				afterBatch(epoch, done)
			}
			lossSum += l * float64(b.Size())
			tb.batch(int64(epoch*train.Len()+done), l, sched.LR())
			if bar != nil {
				bar.add(fmt.Sprintf("loss %.4f acc %.4f %.0f samples/s",
					lossSum/float64(seen), float64(correct)/float64(seen), float64(seen*world)/time.Since(t0).Seconds()))
			}
		}
		if ctx.Err() != nil && done < train.Len() {
			interrupted := &exitError{code: 130}
			if !lead { // rank 0 saves; the parameters are the same on every rank
				return interrupted
			}
			if bar != nil {
				bar.finish()
			}
			if done == 0 {
				interrupted.msg = fmt.Sprintf("interrupted before epoch %d started: %s keeps the last finished epoch (%d)", epoch+1, modelPath, epoch)
				return interrupted
			}
			if err := save(epoch, done); err != nil {
				return err
			}
			interrupted.msg = fmt.Sprintf("interrupted in epoch %d after batch %d of %d: saved that state to %s (--resume continues from it); %s keeps the last finished epoch (%d)",
				epoch+1, done, train.Len(), midModel, modelPath, epoch)
			return interrupted
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
			bar.finish()
		}
		fmt.Fprintf(out, "epoch %d: train loss %.4f acc %.4f | test loss %.4f acc %.4f | %.1fs, %.0f samples/s\n",
			row.epoch, row.trainLoss, row.trainAcc, row.testLoss, row.testAcc, row.seconds, row.samplesPerS)
		if err := writeMetrics(filepath.Join(f.out, "metrics.csv"), rows); err != nil {
			return err
		}
		if err := writePlot(filepath.Join(f.out, "plot.png"), rows); err != nil {
			return err
		}
		if err := tb.epoch(row, m); err != nil {
			return err
		}
		if err := save(epoch+1, 0); err != nil {
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
		if ctx.Err() != nil { // during the epoch's last batch or its evaluation
			return &exitError{code: 130, msg: fmt.Sprintf("interrupted: epoch %d was finished and saved to %s", epoch+1, modelPath)}
		}
	}
	return nil
}

// interruptContext is done at Ctrl-C (SIGINT); tests replace it.
var interruptContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

// afterBatch, when set (tests), is called after each trained batch.
var afterBatch func(epoch, done int)

// validateTrainFlags rejects values that cannot train, in one line each.
func validateTrainFlags(f trainOptions) error {
	switch {
	case f.epochs < 1:
		return fmt.Errorf("--epochs %d: want at least 1", f.epochs)
	case f.batch < 1:
		return fmt.Errorf("--batch %d: want at least 1", f.batch)
	case f.limit < 0:
		return fmt.Errorf("--limit %d: want 0 (all samples) or more", f.limit)
	case f.workers < 0:
		return fmt.Errorf("--workers %d: want 0 or more", f.workers)
	case !(f.lr > 0):
		return fmt.Errorf("--lr %v: want a positive learning rate", f.lr)
	case f.model != "cnn" && f.model != "resnet18" && f.model != "resnet34":
		return fmt.Errorf("--model %q: want cnn, resnet18 (resnet34 with --dataset imagefolder) or gpt", f.model)
	case !(f.momentum >= 0) || !(f.weightDecay >= 0): // (NaN too)
		return fmt.Errorf("--momentum and --weight-decay must not be negative (got %v, %v)", f.momentum, f.weightDecay)
	case f.amp != "" && f.amp != "bf16" && f.amp != "fp16":
		return fmt.Errorf("--amp %q: want bf16 or fp16", f.amp)
	}
	return nil
}

// checkpoint is what --resume loads.
type checkpoint struct {
	model, optim       map[string]*ember.Tensor
	modelPath, optPath string
	epoch, batch       int
	meta               map[string]string
}

// pickCheckpoint returns the interrupted checkpoint when there is one (it
// is newer than the end-of-epoch one, which the end of its epoch removes),
// else the end-of-epoch one.
func pickCheckpoint(modelPath, optPath, midModel, midOpt string) (*checkpoint, error) {
	ck := &checkpoint{modelPath: modelPath, optPath: optPath}
	if _, err := os.Stat(midModel); err == nil {
		ck.modelPath, ck.optPath = midModel, midOpt
	}
	sd, meta, err := loadWeights(ck.modelPath)
	if err != nil {
		return nil, err
	}
	osd, err := weights.LoadSafetensors(ck.optPath)
	if err != nil {
		return nil, err
	}
	ck.model, ck.optim, ck.meta = sd, osd, meta
	if ck.epoch, err = strconv.Atoi(meta["epoch"]); err != nil {
		if model := meta["model"]; model == "gpt" { // counts steps, not epochs
			return nil, fmt.Errorf("%s is a --model gpt checkpoint: resume it with --model gpt --dataset %s", ck.modelPath, meta["dataset"])
		}
		return nil, fmt.Errorf("%s has no epoch in its metadata: not a checkpoint of ember train", ck.modelPath)
	}
	if ck.epoch < 0 {
		return nil, fmt.Errorf("%s: bad epoch %d in its metadata", ck.modelPath, ck.epoch)
	}
	if b, ok := meta["batch"]; ok {
		if ck.batch, err = strconv.Atoi(b); err != nil || ck.batch < 0 {
			return nil, fmt.Errorf("%s: bad batch %q in its metadata", ck.modelPath, b)
		}
	}
	return ck, nil
}

var metricsHeader = []string{"epoch", "train_loss", "train_acc", "test_loss", "test_acc", "seconds", "samples_per_s"}

func writeMetrics(path string, rows []epochRow) error {
	g := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	recs := make([][]string, len(rows))
	for i, r := range rows {
		recs[i] = []string{strconv.Itoa(r.epoch), g(r.trainLoss), g(r.trainAcc), g(r.testLoss), g(r.testAcc), g(r.seconds), g(r.samplesPerS)}
	}
	return writeCSV(path, metricsHeader, recs)
}

func readMetrics(path string) ([]epochRow, error) {
	vs, err := readCSVFloats(path, len(metricsHeader))
	var rows []epochRow
	for _, v := range vs {
		rows = append(rows, epochRow{int(v[0]), v[1], v[2], v[3], v[4], v[5], v[6]})
	}
	return rows, err
}

// writeCSV writes a header and records to path.
func writeCSV(path string, header []string, recs [][]string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(fh)
	w.Write(header)
	w.WriteAll(recs)
	if err := w.Error(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// readCSVFloats reads the records after the header of a CSV file of n
// numeric columns (records of another width are skipped).
func readCSVFloats(path string, n int) ([][]float64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		return nil, err
	}
	var out [][]float64
	for _, r := range recs[min(1, len(recs)):] {
		if len(r) != n {
			continue
		}
		v := make([]float64, n)
		for i, s := range r {
			v[i], _ = strconv.ParseFloat(s, 64)
		}
		out = append(out, v)
	}
	return out, nil
}

// appendFinite appends the point (x, y) unless y is NaN or infinite: a
// diverged run's loss leaves a gap in its curve (gonum/plot refuses NaN
// points, and the run ended at its first plot without a checkpoint).
func appendFinite(xy plotter.XYs, x, y float64) plotter.XYs {
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return xy
	}
	return append(xy, plotter.XY{X: x, Y: y})
}

// xRange is a plot's x axis from the first to the last row, widened around
// a single one; set explicitly, it holds when every point is a gap.
func xRange(first, last float64) (float64, float64) {
	if first >= last {
		return first - 1, first + 1
	}
	return first, last
}

// writePlot draws loss and accuracy in two panels sharing the epoch axis;
// each panel's y range leaves its top third free for the legend, so the
// legend never covers a curve.
func writePlot(path string, rows []epochRow) error {
	series := func(get func(epochRow) float64) plotter.XYs {
		xy := make(plotter.XYs, 0, len(rows))
		for _, r := range rows {
			xy = appendFinite(xy, float64(r.epoch), get(r))
		}
		return xy
	}
	panel := func(title string, lo float64, a, b plotter.XYs) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "epoch"
		if err := plotutil.AddLinePoints(p, "train", a, "test", b); err != nil {
			return nil, err
		}
		hi := lo
		for _, xy := range []plotter.XYs{a, b} {
			for _, v := range xy {
				hi = math.Max(hi, v.Y)
			}
		}
		if hi <= lo {
			hi = lo + 1
		}
		p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*0.5 // the legend's room
		p.Legend.Top = true
		p.Legend.Left = false
		p.X.Min, p.X.Max = xRange(float64(rows[0].epoch), float64(rows[len(rows)-1].epoch))
		return p, nil
	}
	loss, err := panel("loss", 0, series(func(r epochRow) float64 { return r.trainLoss }), series(func(r epochRow) float64 { return r.testLoss }))
	if err != nil {
		return err
	}
	acc, err := panel("accuracy", 0, series(func(r epochRow) float64 { return r.trainAcc }), series(func(r epochRow) float64 { return r.testAcc }))
	if err != nil {
		return err
	}
	img := vgimg.New(6*vg.Inch, 6*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(12)}
	cs := plot.Align([][]*plot.Plot{{loss}, {acc}}, tiles, dc)
	loss.Draw(cs[0][0])
	acc.Draw(cs[1][0])
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
