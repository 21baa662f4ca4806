package models

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/emberml/ember/hub"
	"github.com/emberml/ember/weights"
)

//go:embed imagenet_classes.txt
var imagenetClasses string

// ImageNetCategories are the 1000 ImageNet-1k class names in torchvision's
// order (torchvision.models._meta._IMAGENET_CATEGORIES).
var ImageNetCategories = strings.Split(strings.TrimSpace(imagenetClasses), "\n")

// Preprocess is the evaluation preprocessing a set of weights was trained
// for: resize the shorter side to ResizeSize (bilinear, antialiased), crop
// the centre CropSize×CropSize, scale to [0, 1], normalise with Mean, Std.
type Preprocess struct {
	ResizeSize, CropSize int
	Mean, Std            [3]float64
}

// ImageNetPreprocess is torchvision's ImageClassification(crop_size=224)
// preset, shared by the ResNet IMAGENET1K_V1 weights.
var ImageNetPreprocess = Preprocess{ResizeSize: 256, CropSize: 224,
	Mean: [3]float64{0.485, 0.456, 0.406}, Std: [3]float64{0.229, 0.224, 0.225}}

// Weights describes a published checkpoint, as torchvision's WeightsEnum
// entries do: where it is, what it predicts, how to feed it.
type Weights struct {
	Name       string   // torchvision's name, "ResNet18_Weights.IMAGENET1K_V1"
	URL        string   // the download; its last path element is the cached file's name
	Categories []string // class names, in output order
	Preprocess Preprocess
}

// ResNet18Weights is ResNet18_Weights.IMAGENET1K_V1 (acc@1 69.758).
var ResNet18Weights = &Weights{Name: "ResNet18_Weights.IMAGENET1K_V1",
	URL:        "https://download.pytorch.org/models/resnet18-f37072fd.pth",
	Categories: ImageNetCategories, Preprocess: ImageNetPreprocess}

// ResNet34Weights is ResNet34_Weights.IMAGENET1K_V1 (acc@1 73.314).
var ResNet34Weights = &Weights{Name: "ResNet34_Weights.IMAGENET1K_V1",
	URL:        "https://download.pytorch.org/models/resnet34-b627a593.pth",
	Categories: ImageNetCategories, Preprocess: ImageNetPreprocess}

// FileName is the name torch.hub caches the weights under
// ("resnet18-f37072fd.pth"): the URL's last element.
func (w *Weights) FileName() string { return path.Base(w.URL) }

// CachePath is where torch.hub keeps the file:
// $TORCH_HOME/hub/checkpoints/FileName().
func (w *Weights) CachePath() string { return filepath.Join(hub.CheckpointsDir(), w.FileName()) }

// Fetch returns the cached file's path, downloading it when absent (see
// hub.CachedFile: SHA-256 prefix checked, EMBER_OFFLINE honoured).
func (w *Weights) Fetch(ctx context.Context, opts ...hub.Option) (string, error) {
	return hub.CachedFile(ctx, w.URL, opts...)
}

// PretrainedError is a pretrained model that could not be had: the
// weights could not be fetched or verified, or do not fit the model.
type PretrainedError struct {
	Weights string
	Reason  string
	Err     error
}

func (e *PretrainedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("models: pretrained %s: %v", e.Weights, e.Err)
	}
	return e.Reason
}

func (e *PretrainedError) Unwrap() error { return e.Err }

// Pretrained loads the architecture's published ImageNet weights into the
// model (ResNet18, ResNet34), finding or downloading them as torchvision
// does (see Weights.Fetch; opts go to hub.CachedFile). The constructor
// panics with a *PretrainedError when they cannot be had, as torchvision
// raises; LoadPretrained returns the error instead.
func Pretrained(opts ...hub.Option) Option {
	return func(c *config) { c.pretrained, c.hubOpts = true, opts }
}

// PretrainedFrom is Pretrained with other weights (a mirror, a
// reduced-width test checkpoint).
func PretrainedFrom(w *Weights, opts ...hub.Option) Option {
	return func(c *config) { c.pretrained, c.from, c.hubOpts = true, w, opts }
}

func defaultWeights(w *Weights) Option { return func(c *config) { c.arch = w } }

func (c *config) weights() *Weights {
	if !c.pretrained {
		return nil
	}
	if c.from != nil {
		return c.from
	}
	return c.arch
}

func loadInto(r *ResNet, w *Weights, c config) error {
	if len(w.Categories) > 0 && c.classes != len(w.Categories) {
		return &PretrainedError{Weights: w.Name, Reason: fmt.Sprintf(
			"models: pretrained %s predicts %d classes, not NumClasses(%d): load it with 1000 and replace FC to fine-tune", w.Name, len(w.Categories), c.classes)}
	}
	p, err := hub.CachedFile(context.Background(), w.URL, c.hubOpts...)
	if err != nil {
		return &PretrainedError{Weights: w.Name, Err: err}
	}
	sd, err := weights.LoadPyTorch(p)
	if err != nil {
		return &PretrainedError{Weights: w.Name, Err: err}
	}
	if err := r.LoadStateDict(sd, true); err != nil {
		return &PretrainedError{Weights: w.Name, Err: fmt.Errorf("%s: %w", p, err)}
	}
	return nil
}

// LoadPretrained builds arch ("resnet18" or "resnet34") with its published
// weights, returning the error that Pretrained would panic with.
func LoadPretrained(arch string, opts ...hub.Option) (*ResNet, *Weights, error) {
	var (
		w      *Weights
		layers [4]int
	)
	switch arch {
	case "resnet18":
		w, layers = ResNet18Weights, [4]int{2, 2, 2, 2}
	case "resnet34":
		w, layers = ResNet34Weights, [4]int{3, 4, 6, 3}
	default:
		return nil, nil, fmt.Errorf("models: no pretrained weights for %q (want resnet18 or resnet34)", arch)
	}
	m, err := LoadPretrainedFrom(layers, w, opts...)
	return m, w, err
}

// LoadPretrainedFrom builds a ResNet with the given blocks per stage and
// w's weights (its class count from w.Categories, 1000 when empty).
func LoadPretrainedFrom(layers [4]int, w *Weights, opts ...hub.Option) (*ResNet, error) {
	if w == nil {
		return nil, &PretrainedError{Reason: "models: LoadPretrainedFrom: nil *Weights"}
	}
	c := config{classes: 1000, in: 3, width: 64, pretrained: true, from: w, hubOpts: opts}
	if len(w.Categories) > 0 {
		c.classes = len(w.Categories)
	}
	return loadFrom(layers, c)
}

func loadFrom(layers [4]int, c config) (*ResNet, error) {
	r := newResNet(layers, c)
	if err := loadInto(r, c.from, c); err != nil {
		return nil, err
	}
	return r, nil
}
