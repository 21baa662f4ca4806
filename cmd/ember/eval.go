package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/vision/datasets"
	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/weights"
	"github.com/spf13/cobra"
)

var evalFlags struct {
	weights, model, dataset, device, dataDir string
	batch, limit                             int
}

var evalCmd = &cobra.Command{
	Use:   "eval --weights FILE",
	Short: "Test accuracy and confusion matrix of a trained model",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := evalFlags
		switch {
		case f.batch < 1:
			return fmt.Errorf("--batch %d: want at least 1", f.batch)
		case f.limit < 0:
			return fmt.Errorf("--limit %d: want 0 (all samples) or more", f.limit)
		}
		dev, err := pickDevice(f.device)
		if err != nil {
			return err
		}
		sd, meta, err := loadWeights(f.weights)
		if err != nil {
			return err
		}
		model := f.model
		if model == "" {
			model = meta["model"]
		}
		if model == "" {
			return fmt.Errorf("%s does not say which model it holds (no ember metadata): pass --model cnn or --model resnet18", f.weights)
		}
		if saved := meta["model"]; saved != "" && saved != model {
			return fmt.Errorf("%s holds a %s (its metadata), not --model %s", f.weights, saved, model)
		}
		// the data set it was trained on, unless --dataset says otherwise
		if f.dataset == "" {
			f.dataset = "fashion-mnist"
			if saved := meta["dataset"]; saved != "" {
				if strings.HasPrefix(saved, "text:") {
					return fmt.Errorf("%s is a GPT trained on --dataset %s: ember eval tests image classifiers (the run's metrics.csv has its validation loss; ember generate --model %s runs it)", f.weights, saved, filepath.Dir(f.weights))
				}
				if strings.Contains(saved, ":") { // imagefolder:DIR
					return fmt.Errorf("%s was trained on --dataset %s: ember eval tests fashion-mnist, mnist and synthetic models (the run's metrics.csv has its validation accuracy; ember predict classifies images with it)", f.weights, saved)
				}
				f.dataset = saved
			}
		}
		m, err := buildModel(model)
		if err != nil {
			return err
		}
		if err := m.LoadStateDict(sd, true); err != nil {
			return err
		}
		m.To(dev)
		test, classes, err := loadDataset(f.dataset, false, f.dataDir)
		if err != nil {
			return err
		}
		res := evaluate(m, data.NewLoader(data.Take(test, f.limit), data.BatchSize(f.batch), data.Workers(2)), dev)
		fmt.Fprintf(cmd.OutOrStdout(), "test accuracy %.4f (%d/%d), loss %.4f\n", res.acc(), res.correct, res.n, res.loss)
		writeConfusion(cmd.OutOrStdout(), res.confusion, classes)
		return nil
	},
}

func init() {
	fl := evalCmd.Flags()
	fl.StringVar(&evalFlags.weights, "weights", "", "model weights (.safetensors or torch .pth state dict)")
	fl.StringVar(&evalFlags.model, "model", "", "cnn or resnet18 (default: from the checkpoint's metadata)")
	fl.StringVar(&evalFlags.dataset, "dataset", "", "fashion-mnist, mnist or synthetic (default: the checkpoint's, else fashion-mnist)")
	fl.StringVar(&evalFlags.device, "device", "auto", "auto, cpu or cuda:N")
	fl.StringVar(&evalFlags.dataDir, "data-dir", "", "dataset directory (default: $EMBER_DATA_DIR or the Debian package's)")
	fl.IntVar(&evalFlags.batch, "batch", 256, "batch size")
	fl.IntVar(&evalFlags.limit, "limit", 0, "evaluate the first N test samples only")
	evalCmd.MarkFlagRequired("weights")
	rootCmd.AddCommand(evalCmd)
}

// pickDevice parses a --device flag: "auto" (cuda:0 if usable, else cpu),
// cpu, cuda or cuda:N, checked to be usable. meta is refused: its tensors
// have no data, so nothing a command prints or writes could be computed.
func pickDevice(s string) (ember.Device, error) {
	if s == "auto" {
		return ember.TryGPU(0), nil
	}
	return parseComputeDevice(s)
}

// parseComputeDevice parses and checks a device that must hold data: cpu,
// cuda or cuda:N, not meta.
func parseComputeDevice(s string) (ember.Device, error) {
	d, err := ember.ParseDevice(s)
	if err != nil {
		return d, err
	}
	if d.Type == ember.MetaType {
		return d, fmt.Errorf("--device %s: meta tensors have no data to compute with; want cpu or cuda:N", s)
	}
	return d, ember.CheckDevice(d)
}

// loadWeights reads a state dict and its safetensors metadata. The format
// is told by the file's first bytes, not its name: torch.save's zip (or
// its legacy pickle) is read as PyTorch, so model_best.pth.tar,
// pytorch_model.bin and .ckpt files load, anything else as safetensors.
func loadWeights(path string) (map[string]*ember.Tensor, map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var sd map[string]*ember.Tensor
	var meta map[string]string
	// torch's legacy format opens with the pickled magic number
	// 0x1950a86a20f9469cfc6c, a safetensors header length beyond its limit
	if bytes.HasPrefix(b, []byte("PK\x03\x04")) || bytes.HasPrefix(b, []byte("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46")) {
		sd, err = weights.ParsePyTorch(b)
	} else {
		sd, meta, err = weights.ParseSafetensors(b)
	}
	if fe, ok := err.(*weights.FormatError); ok {
		fe.Path = path
	}
	return sd, meta, err
}

func buildModel(name string) (nn.Module, error) {
	switch name {
	case "cnn":
		return models.SimpleCNN(1, 10), nil
	case "resnet18":
		return models.ResNet18(models.InChannels(1), models.NumClasses(10)), nil
	}
	return nil, fmt.Errorf("unknown model %q (want cnn or resnet18)", name)
}

// loadDataset returns a dataset's train or test split and its class names.
func loadDataset(name string, train bool, dir string) (data.Dataset, []string, error) {
	var opts []datasets.Option
	if dir != "" {
		opts = append(opts, datasets.Dir(dir))
	}
	var ds *datasets.MNIST
	var err error
	switch name {
	case "fashion-mnist":
		ds, err = datasets.FashionMNIST(train, opts...)
	case "mnist":
		ds, err = datasets.LoadMNIST(train, opts...)
	case "synthetic":
		return newSynthetic(train), syntheticClasses, nil
	default:
		return nil, nil, fmt.Errorf("unknown dataset %q (want fashion-mnist, mnist or synthetic)", name)
	}
	if err != nil {
		var me *datasets.MissingError
		if dir == "" && errors.As(err, &me) {
			// the package's advice, in the command's terms
			hint := "pass --data-dir DIR with the four IDX files or set $EMBER_DATA_DIR"
			if me.Package != "" {
				hint += ", install the Debian package " + me.Package
			}
			return nil, nil, fmt.Errorf("%s: %s not found in %s: %s, or use --dataset synthetic", me.Name, me.File, me.Dir, hint)
		}
		if dir == "" {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("--data-dir %s: %w", dir, err)
	}
	return ds, ds.Classes, nil
}

type evalResult struct {
	n, correct int
	loss       float64
	confusion  [][]int
}

func (r evalResult) acc() float64 { return float64(r.correct) / float64(max(r.n, 1)) }

// evaluate runs m in eval mode over l and restores training mode.
func evaluate(m nn.Module, l *data.DataLoader, dev ember.Device) evalResult {
	was := m.Training()
	m.Eval()
	defer m.Train(was)
	res := evalResult{}
	ce := nn.CrossEntropyLoss{Reduction: nn.Sum}
	for b := range l.Epoch(0) {
		x, y := b.Input.To(dev), b.Target.To(dev)
		var out *ember.Tensor
		ember.NoGrad(func() {
			out = m.Forward(x)
			res.loss += ce.Loss(out, y).Item()
		})
		if res.confusion == nil { // classes × classes
			k := out.Shape()[1]
			res.confusion = make([][]int, k)
			for i := range res.confusion {
				res.confusion[i] = make([]int, k)
			}
		}
		pred := out.ArgMaxDim(1, false).Int64s()
		for i, t := range b.Target.Int64s() {
			res.confusion[t][pred[i]]++
			if pred[i] == t {
				res.correct++
			}
		}
		res.n += b.Size()
	}
	res.loss /= float64(max(res.n, 1))
	return res
}

func writeConfusion(w io.Writer, c [][]int, classes []string) {
	fmt.Fprintf(w, "confusion matrix (rows: true class, columns: predicted)\n%12s", "")
	for j := range c {
		fmt.Fprintf(w, " %5d", j)
	}
	fmt.Fprintln(w)
	for i, row := range c {
		name := classes[i]
		if len(name) > 11 {
			name = name[:11]
		}
		fmt.Fprintf(w, "%d %-10s", i, name)
		for _, v := range row {
			fmt.Fprintf(w, " %5d", v)
		}
		fmt.Fprintln(w)
	}
}
