package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/hub"
	"github.com/emberml/ember/vision/imageio"
	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/vision/transforms"
	"github.com/spf13/cobra"
)

var predictFlags struct {
	model, weights, device, classes string
	pretrained, json, orient        bool
	topk                            int
}

var predictCmd = &cobra.Command{
	Use:   "predict (--pretrained | --weights FILE) [--model resnet18|resnet34] IMAGE...",
	Short: "Classify images: the top-k classes with their probabilities",
	Args:  cobra.MinimumNArgs(1),
	RunE:  runPredict,
}

func init() {
	fl := predictCmd.Flags()
	f := &predictFlags
	fl.StringVar(&f.model, "model", "", "resnet18 or resnet34 (default: an ember train checkpoint's, else resnet18)")
	fl.BoolVar(&f.pretrained, "pretrained", false, "torchvision's ImageNet weights, from $TORCH_HOME/hub/checkpoints or downloaded there (EMBER_OFFLINE=1: never download)")
	fl.StringVar(&f.weights, "weights", "", "a state dict (.pth or .safetensors); a torchvision-style name (resnet18-<sha256 prefix>.pth) has its hash checked")
	fl.StringVar(&f.classes, "classes", "", "class names, one per line (default: ImageNet's for 1000 outputs, else the checkpoint's own)")
	fl.StringVar(&f.device, "device", "auto", "auto, cpu or cuda:N")
	fl.IntVar(&f.topk, "topk", 5, "how many classes to show")
	fl.BoolVar(&f.json, "json", false, "print JSON")
	fl.BoolVar(&f.orient, "auto-orient", true, "apply the images' EXIF orientation")
	rootCmd.AddCommand(predictCmd)
}

// prediction is one image's result, as --json prints it.
type prediction struct {
	Image string      `json:"image"`
	Top   []predClass `json:"top"`
}

type predClass struct {
	Index       int     `json:"index"`
	Class       string  `json:"class"`
	Probability float64 `json:"probability"`
}

func runPredict(cmd *cobra.Command, args []string) error {
	f := predictFlags
	if f.pretrained == (f.weights != "") {
		return fmt.Errorf("give one of --pretrained and --weights FILE")
	}
	if f.topk < 1 {
		return fmt.Errorf("--topk %d: want at least 1", f.topk)
	}
	dev, err := pickDevice(f.device)
	if err != nil {
		return err
	}
	m, classes, pre, err := predictModel(f.model, f.pretrained, f.weights, cmd)
	if err != nil {
		return err
	}
	if f.classes != "" {
		b, err := os.ReadFile(f.classes)
		if err != nil {
			return err
		}
		classes = classLines(string(b))
	}
	n := m.FC.Out
	if classes != nil && len(classes) != n {
		return fmt.Errorf("%d class names for a model with %d outputs", len(classes), n)
	}
	m.To(dev)
	m.Eval()
	var opts []imageio.Option
	if f.orient {
		opts = append(opts, imageio.AutoOrient())
	}
	var results []prediction
	for _, path := range args {
		img, err := imageio.Open(path, opts...)
		if err != nil {
			return err
		}
		x := pre.Apply(img, nil).Unsqueeze(0).To(dev)
		var probs []float32
		ember.NoGrad(func() { probs = m.Forward(x).Softmax(1).CPU().Float32s() })
		idx := make([]int, len(probs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return probs[idx[a]] > probs[idx[b]] })
		p := prediction{Image: path}
		for _, i := range idx[:min(f.topk, len(idx))] {
			name := fmt.Sprintf("class %d", i)
			if classes != nil {
				name = classes[i]
			}
			p.Top = append(p.Top, predClass{i, name, float64(probs[i])})
		}
		results = append(results, p)
	}
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	for _, r := range results {
		fmt.Fprintln(out, r.Image)
		for k, c := range r.Top {
			fmt.Fprintf(out, "  %d. %6.2f%%  %s (%d)\n", k+1, 100*c.Probability, c.Class, c.Index)
		}
	}
	return nil
}

// classLines splits a --classes file into its lines, without their line
// ends ("\n" or "\r\n": a file saved on Windows gave names ending in
// "\r", which garbled the printed table) and without trailing blank lines.
func classLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\r\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// predictModel builds the network with its weights, the class names and
// the preprocessing. arch "" is an ember train checkpoint's model (its
// metadata), else resnet18; a checkpoint that is not an RGB image
// classifier (cnn, gpt, a Fashion-MNIST resnet18) is refused with what it
// is.
func predictModel(arch string, pretrained bool, file string, cmd *cobra.Command) (*models.ResNet, []string, transforms.Preset, error) {
	var (
		sd   map[string]*ember.Tensor
		meta map[string]string
	)
	if !pretrained {
		if err := hub.VerifyFile(file, hub.HashPrefix(filepath.Base(file))); err != nil {
			return nil, nil, transforms.Preset{}, err
		}
		var err error
		if sd, meta, err = loadWeights(file); err != nil {
			return nil, nil, transforms.Preset{}, err
		}
		if err := predictable(file, meta); err != nil {
			return nil, nil, transforms.Preset{}, err
		}
		if arch == "" {
			arch = meta["model"]
		}
		if arch == "" { // a plain state dict: its keys tell the depth
			if arch, err = resnetFromKeys(file, sd); err != nil {
				return nil, nil, transforms.Preset{}, err
			}
		}
	}
	if arch == "" {
		arch = "resnet18"
	}
	var layers [4]int
	var w *models.Weights
	switch arch {
	case "resnet18":
		layers, w = [4]int{2, 2, 2, 2}, models.ResNet18Weights
	case "resnet34":
		layers, w = [4]int{3, 4, 6, 3}, models.ResNet34Weights
	default:
		return nil, nil, transforms.Preset{}, fmt.Errorf("--model %q: want resnet18 or resnet34", arch)
	}
	p := w.Preprocess
	pre := transforms.ImageNetEval(p.ResizeSize, p.CropSize, p.Mean, p.Std)
	if pretrained {
		m, err := models.LoadPretrainedFrom(layers, weightsSource(w), hub.Progress(cmd.ErrOrStderr()))
		return m, w.Categories, pre, err
	}
	if saved := meta["model"]; saved != "" && saved != arch {
		return nil, nil, pre, fmt.Errorf("%s holds a %s (its metadata), not --model %s", file, saved, arch)
	}
	fc, ok := sd["fc.weight"]
	if !ok || fc.Dim() != 2 {
		return nil, nil, pre, fmt.Errorf("%s has no fc.weight: not a ResNet state dict", file)
	}
	n := fc.Shape()[0]
	m := models.NewResNet(layers, models.NumClasses(n))
	if err := m.LoadStateDict(sd, true); err != nil {
		return nil, nil, pre, fmt.Errorf("%s: %w", file, err)
	}
	var classes []string
	switch {
	case meta["classes"] != "":
		classes = strings.Split(meta["classes"], "\n")
	case n == len(models.ImageNetCategories):
		classes = models.ImageNetCategories
	}
	if s := meta["image_size"]; s != "" { // a model fine-tuned by ember train at another size
		crop, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || crop < minImageSize || crop > maxImageSize {
			return nil, nil, pre, fmt.Errorf("%s: metadata image_size %q: want a whole number from %d to %d", file, s, minImageSize, maxImageSize)
		}
		pre = transforms.ImageNetEval(crop*8/7, crop, p.Mean, p.Std)
	}
	return m, classes, pre, nil
}

// resnetFromKeys tells torchvision's ResNet-18 from its ResNet-34 by the
// blocks a state dict has (layer3 has 2 or 6), so a resnet34-*.pth loads
// without --model; bottleneck ResNets (conv3 in their blocks) are refused
// by name. It returns "" when the keys are not a ResNet's (the load then
// says what is missing).
func resnetFromKeys(file string, sd map[string]*ember.Tensor) (string, error) {
	switch {
	case sd["layer1.0.conv3.weight"] != nil:
		return "", fmt.Errorf("%s is a bottleneck ResNet (ResNet-50 or deeper): ember predict runs resnet18 and resnet34", file)
	case sd["layer3.5.conv1.weight"] != nil:
		return "resnet34", nil
	case sd["layer3.1.conv1.weight"] != nil:
		return "resnet18", nil
	}
	return "", nil
}

// predictable refuses an ember train checkpoint that ember predict cannot
// run: only ResNets trained on RGB images (--dataset imagefolder:DIR) are.
func predictable(file string, meta map[string]string) error {
	model, dataset := meta["model"], meta["dataset"]
	switch {
	case model == "":
		return nil // not ember's: a torchvision state dict
	case model == "gpt":
		return fmt.Errorf("%s is a GPT checkpoint: run its folder with ember generate --model %s", file, filepath.Dir(file))
	case model != "resnet18" && model != "resnet34":
		return fmt.Errorf("%s holds a %s trained on %s: ember predict classifies RGB images with resnet18 or resnet34 (ember eval --weights %s tests it)", file, model, dataset, file)
	case dataset != "" && !strings.HasPrefix(dataset, "imagefolder:"):
		return fmt.Errorf("%s holds a %s trained on %s (grayscale 28×28): ember predict classifies RGB images (ember eval --weights %s tests it)", file, model, dataset, file)
	}
	return nil
}

// weightsSource is where --pretrained fetches w from; tests point it at a
// local server.
var weightsSource = func(w *models.Weights) *models.Weights { return w }
