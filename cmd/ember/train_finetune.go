package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/emberml/ember/data"
	"github.com/emberml/ember/hub"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/tensorboard"
	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/vision/transforms"
	"github.com/spf13/cobra"
)

// fineTuneOptions are ember train's flags for image folders, pretrained
// weights and TensorBoard.
type fineTuneOptions struct {
	pretrained, freezeBackbone, skipBad bool
	numClasses, unfreezeAt, imageSize   int
	tensorboard                         string
}

var ftFlags fineTuneOptions

// tbDefault stands for --tensorboard given without a value.
const tbDefault = "runs/<name>"

// The image sizes ember train --image-size takes and ember predict accepts
// from a checkpoint's image_size: a hostile checkpoint's 100 000 was a
// fatal out-of-memory in predict.
const (
	minImageSize = 8
	maxImageSize = 4096
)

func init() {
	fl := trainCmd.Flags()
	f := &ftFlags
	fl.BoolVar(&f.pretrained, "pretrained", false, "start from torchvision's ImageNet weights (resnet18, resnet34; with --dataset imagefolder:DIR)")
	fl.BoolVar(&f.freezeBackbone, "freeze-backbone", false, "train only the new head (fc); the rest computes no gradients")
	fl.IntVar(&f.unfreezeAt, "unfreeze-at", 0, "with --freeze-backbone: train everything from this epoch on (1-based; 0: never)")
	fl.IntVar(&f.numClasses, "num-classes", 0, "outputs of the new head (default: the image folder's class count)")
	fl.IntVar(&f.imageSize, "image-size", 224, "imagefolder: training crop (RandomResizedCrop) and evaluation crop (after resizing to size·8/7), 8 to 4096")
	fl.BoolVar(&f.skipBad, "skip-bad-images", false, "imagefolder: leave out files that are not images (listed on stderr) instead of failing")
	fl.StringVar(&f.tensorboard, "tensorboard", "", "write TensorBoard event files to DIR (given without a value: runs/<name of --out>)")
	fl.Lookup("tensorboard").NoOptDefVal = tbDefault
	trainCmd.Args = tensorboardArgs
}

// tensorboardArgs lets "--tensorboard DIR" take DIR with a space as well as
// "--tensorboard=DIR": pflag reads a flag with an optional value only in the
// second form, leaving DIR as an argument; ember train takes no other
// arguments, so a single one after a bare --tensorboard is its directory.
func tensorboardArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 1 && ftFlags.tensorboard == tbDefault {
		ftFlags.tensorboard = args[0]
		return nil
	}
	return cobra.NoArgs(cmd, args)
}

// trainSetup builds the model and the train and test sets; meta goes into
// the checkpoints (the class names and crop size, which ember predict reads).
func trainSetup(cmd *cobra.Command, f trainOptions) (nn.Module, data.Dataset, data.Dataset, map[string]string, error) {
	ft := ftFlags
	dir, isFolder := strings.CutPrefix(f.dataset, "imagefolder:")
	if !isFolder {
		if ft.pretrained || ft.freezeBackbone || ft.numClasses != 0 {
			return nil, nil, nil, nil, errors.New("--pretrained, --freeze-backbone and --num-classes need --dataset imagefolder:DIR")
		}
		if strings.HasPrefix(f.dataset, "text:") {
			return nil, nil, nil, nil, fmt.Errorf("--dataset %s is text: it trains --model gpt, not %s", f.dataset, f.model)
		}
		m, err := buildModel(f.model)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		trainDS, _, err := loadDataset(f.dataset, true, f.dataDir)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		testDS, _, err := loadDataset(f.dataset, false, f.dataDir)
		return m, trainDS, testDS, nil, err
	}
	switch {
	case ft.unfreezeAt < 0:
		return nil, nil, nil, nil, fmt.Errorf("--unfreeze-at %d: want 0 (never) or an epoch", ft.unfreezeAt)
	case ft.imageSize < minImageSize || ft.imageSize > maxImageSize:
		return nil, nil, nil, nil, fmt.Errorf("--image-size %d: want %d to %d", ft.imageSize, minImageSize, maxImageSize)
	case ft.numClasses < 0:
		return nil, nil, nil, nil, fmt.Errorf("--num-classes %d: want 0 (the folder's classes) or more", ft.numClasses)
	}
	trainDS, testDS, classes, err := imageFolders(cmd, dir, ft)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	n := ft.numClasses
	if n == 0 {
		n = len(classes)
	}
	if n < len(classes) {
		return nil, nil, nil, nil, fmt.Errorf("--num-classes %d: the image folder has %d classes", n, len(classes))
	}
	var (
		layers [4]int
		w      *models.Weights
	)
	switch f.model {
	case "resnet18":
		layers, w = [4]int{2, 2, 2, 2}, models.ResNet18Weights
	case "resnet34":
		layers, w = [4]int{3, 4, 6, 3}, models.ResNet34Weights
	default:
		return nil, nil, nil, nil, fmt.Errorf("--dataset imagefolder: --model %q: want resnet18 or resnet34", f.model)
	}
	var m *models.ResNet
	if ft.pretrained {
		if m, err = models.LoadPretrainedFrom(layers, weightsSource(w), hub.Progress(cmd.ErrOrStderr())); err != nil {
			return nil, nil, nil, nil, err
		}
		m.FC = nn.NewLinear(m.FC.In, n, true) // the new head: model.fc = nn.Linear(512, n)
	} else {
		m = models.NewResNet(layers, models.NumClasses(n))
	}
	names := append([]string(nil), classes...)
	for i := len(classes); i < n; i++ {
		names = append(names, "class "+strconv.Itoa(i))
	}
	meta := map[string]string{"classes": strings.Join(names, "\n"), "image_size": strconv.Itoa(ft.imageSize)}
	return m, trainDS, testDS, meta, nil
}

// imageFolders returns DIR/train and DIR/val (or DIR/test) when DIR has
// them, else DIR split: every fifth image to the test set.
func imageFolders(cmd *cobra.Command, dir string, ft fineTuneOptions) (data.Dataset, data.Dataset, []string, error) {
	mean, std := models.ImageNetPreprocess.Mean, models.ImageNetPreprocess.Std
	trainT := transforms.Preset{Image: transforms.Compose{transforms.RandomResizedCrop{Size: ft.imageSize}, transforms.RandomHorizontalFlip{P: 0.5}},
		Mean: mean[:], Std: std[:]}
	testT := transforms.ImageNetEval(ft.imageSize*8/7, ft.imageSize, mean, std)
	var opts []data.ImageFolderOption
	if ft.skipBad {
		opts = append(opts, data.SkipBadImages())
	}
	open := func(root string, t transforms.Preset, seed uint64) (*data.ImageFolder, error) {
		d, err := data.NewImageFolder(root, append(opts, data.WithImageTransform(t, seed))...)
		if err != nil {
			return nil, err
		}
		for _, e := range d.Skipped {
			fmt.Fprintln(cmd.ErrOrStderr(), "skipped:", e)
		}
		return d, nil
	}
	isDir := func(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }
	if !isDir(dir) {
		return nil, nil, nil, fmt.Errorf("--dataset imagefolder:%s: not a folder", dir)
	}
	if tr := filepath.Join(dir, "train"); isDir(tr) {
		te := filepath.Join(dir, "val")
		if !isDir(te) {
			te = filepath.Join(dir, "test")
		}
		trainDS, err := open(tr, trainT, trainFlags.seed)
		if err != nil {
			return nil, nil, nil, err
		}
		testDS, err := open(te, testT, 0)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s has train/ but no usable val/ or test/: %w", dir, err)
		}
		if strings.Join(trainDS.Classes, "\n") != strings.Join(testDS.Classes, "\n") {
			return nil, nil, nil, fmt.Errorf("%s: the train and %s folders have different classes", dir, filepath.Base(te))
		}
		return trainDS, testDS, trainDS.Classes, nil
	}
	all, err := open(dir, trainT, trainFlags.seed)
	if err != nil {
		return nil, nil, nil, err
	}
	eval, _ := open(dir, testT, 0)
	var tr, te []int
	for i := range all.Len() {
		if i%5 == 4 {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
	}
	if len(te) == 0 {
		te = tr
	}
	return &data.Subset{DS: all, Indices: tr}, &data.Subset{DS: eval, Indices: te}, all.Classes, nil
}

// applyFreeze sets which parameters train in epoch (0-based): with
// --freeze-backbone only the head until --unfreeze-at, then everything.
func applyFreeze(m nn.Module, epoch int) {
	ft := ftFlags
	r, ok := m.(*models.ResNet)
	if !ft.freezeBackbone || !ok {
		return
	}
	frozen := ft.unfreezeAt == 0 || epoch+1 < ft.unfreezeAt
	r.RequiresGrad(!frozen)
	r.FC.RequiresGrad(true)
}

// tbLog writes ember train's TensorBoard scalars (nil: no --tensorboard).
type tbLog struct{ w *tensorboard.SummaryWriter }

func openTensorBoard(f trainOptions) (*tbLog, error) {
	dir := ftFlags.tensorboard
	if dir == "" {
		return nil, nil
	}
	if dir == tbDefault {
		dir = filepath.Join("runs", filepath.Base(filepath.Clean(f.out)))
	}
	w, err := tensorboard.NewSummaryWriter(dir)
	if err != nil {
		return nil, fmt.Errorf("--tensorboard: %w", err)
	}
	w.AddText("config", fmt.Sprintf("model %s, dataset %s, epochs %d, batch %d, lr %g, momentum %g, weight decay %g, seed %d",
		f.model, f.dataset, f.epochs, f.batch, f.lr, f.momentum, f.weightDecay, f.seed), 0)
	return &tbLog{w}, nil
}

func (t *tbLog) batch(step int64, loss, lr float64) {
	if t == nil {
		return
	}
	t.w.AddScalar("batch/loss", loss, step)
	t.w.AddScalar("batch/lr", lr, step)
}

func (t *tbLog) epoch(r epochRow, m nn.Module) error {
	if t == nil {
		return nil
	}
	s := int64(r.epoch)
	t.w.AddScalars("loss", map[string]float64{"train": r.trainLoss, "test": r.testLoss}, s)
	t.w.AddScalars("accuracy", map[string]float64{"train": r.trainAcc, "test": r.testAcc}, s)
	t.w.AddScalar("samples_per_s", r.samplesPerS, s)
	for _, p := range m.NamedParameters() {
		if strings.HasSuffix(p.Name, "weight") && p.Tensor.Dim() >= 2 {
			t.w.AddHistogram("weights/"+p.Name, p.Tensor.Detach().CPU(), s)
		}
	}
	return t.w.Flush()
}

func (t *tbLog) close() error {
	if t == nil {
		return nil
	}
	return t.w.Close()
}
