package nn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
)

// TestMoreLayersMatchTorch: Hardtanh, ReLU6 (at their kinks), Softmin,
// Softmax2d, Unflatten, ChannelShuffle, LocalResponseNorm (3-, 4- and
// 5-D) and InstanceNorm1d/2d (affine or not, tracking running statistics
// or not, training and evaluation, unbatched inputs) against PyTorch 1.13
// (testdata/gen_nnextra_fixtures.py): repr, state dict names, output,
// input and parameter gradients, running statistics after the forward, on
// every device.
func TestMoreLayersMatchTorch(t *testing.T) { testMoreLayers(t, allDevices()) }

// The same on the emulated cuda:0.
func TestMoreLayersEmulatedCUDA(t *testing.T) {
	defer emulatedCUDA(t, "TestMoreLayersMatchTorch runs on it")()
	testMoreLayers(t, []ember.Device{ember.CUDA(0)})
}

func testMoreLayers(t *testing.T, devs []ember.Device) {
	f := loadNNExtra(t)
	for _, dev := range devs {
		for i, c := range f.Layers {
			num := func(k string) float64 { return c.Params[k].(float64) }
			var m nn.Module
			switch c.Layer {
			case "hardtanh":
				m = nn.NewHardtanh(num("min"), num("max"))
			case "relu6":
				m = nn.NewReLU6()
			case "softmin":
				m = nn.NewSoftmin(int(num("dim")))
			case "softmax2d":
				m = nn.NewSoftmax2d()
			case "unflatten":
				var sizes []int
				for _, v := range c.Params["sizes"].([]any) {
					sizes = append(sizes, int(v.(float64)))
				}
				m = nn.NewUnflatten(int(num("dim")), sizes...)
			case "channelshuffle":
				m = nn.NewChannelShuffle(int(num("groups")))
			case "lrn":
				m = nn.NewLocalResponseNorm(int(num("size")), num("alpha"), num("beta"), num("k"))
			case "lppool1d":
				m = nn.NewLPPool1d(num("p"), int(num("k")), int(num("s")), c.Params["ceil"].(bool))
			case "lppool2d":
				k, s := c.Params["k"].([]any), c.Params["s"].([]any)
				m = nn.NewLPPool2d(num("p"), [2]int{int(k[0].(float64)), int(k[1].(float64))}, [2]int{int(s[0].(float64)), int(s[1].(float64))}, c.Params["ceil"].(bool))
			case "instancenorm1d", "instancenorm2d", "instancenorm3d":
				affine, track := c.Params["affine"].(bool), c.Params["track"].(bool)
				var in *nn.InstanceNorm
				switch c.Layer {
				case "instancenorm1d":
					in = nn.NewInstanceNorm1d(int(num("n")), affine, track)
				case "instancenorm2d":
					in = nn.NewInstanceNorm2d(int(num("n")), affine, track)
				default:
					in = nn.NewInstanceNorm3d(int(num("n")), affine, track)
				}
				if track { // the fixture's running statistics, in float64
					in.RunningMean = floats(c.Params["running_mean"])
					in.RunningVar = floats(c.Params["running_var"])
				}
				m = in
			default:
				t.Fatalf("unknown layer %s", c.Layer)
			}
			name := fmt.Sprintf("case %d %s %v on %v", i, c.Layer, c.Params, dev)
			if got := m.Registry().String(); got != c.Repr {
				t.Fatalf("%s: repr %q, PyTorch %q", name, got, c.Repr)
			}
			var keys []string
			for _, n := range m.Registry().NamedParameters() {
				keys = append(keys, n.Name)
			}
			if sd := m.StateDict(); len(sd) != len(c.StateDict) {
				t.Fatalf("%s: state dict %v, PyTorch %v", name, sd, c.StateDict)
			} else {
				for _, k := range c.StateDict {
					if sd[k] == nil {
						t.Fatalf("%s: no %s in the state dict", name, k)
					}
				}
			}
			if len(c.Parameters) > 0 {
				m.Registry().MapParameters(func(_ string, p *ember.Tensor) *ember.Tensor {
					return p.Detach().Cast(ember.Float64).SetRequiresGrad(true)
				})
				sd := map[string]*ember.Tensor{}
				for k, p := range c.Parameters {
					sd[k] = ember.FromSlice(p.Data, ember.Shape(p.Shape))
				}
				if err := m.LoadStateDict(sd, false); err != nil {
					t.Fatal(err)
				}
			}
			m.To(dev)
			if !c.Train {
				m.Eval()
			}
			var ins []*ember.Tensor
			for _, in := range c.Inputs {
				ins = append(ins, ember.FromSlice(in.Data, ember.Shape(in.Shape), ember.On(dev), ember.WithGrad()))
			}
			y := m.Forward(ins[0])
			if !y.Shape().Equal(ember.Shape(c.OutShape)) {
				t.Fatalf("%s: shape %v, PyTorch %v", name, y.Shape(), c.OutShape)
			}
			near(t, name+" output", y.Float64s(), c.Out)
			w := ember.Arange(1, float64(y.NumElements())+1, 1, ember.Dtype(ember.Float64), ember.On(dev)).Reshape(y.Shape()...)
			y.Mul(w).Sum().Backward()
			near(t, name+" grad input", ins[0].Grad().Float64s(), c.Inputs[0].Grad)
			for _, np := range m.NamedParameters() {
				near(t, name+" grad "+np.Name, np.Tensor.Grad().Float64s(), c.Parameters[np.Name].Grad)
			}
			sd := m.StateDict()
			for k, b := range c.Buffers {
				near(t, name+" buffer "+k, sd[k].Float64s(), b.Data)
			}
		}
	}
}

func floats(v any) *ember.Tensor {
	var xs []float64
	for _, x := range v.([]any) {
		xs = append(xs, x.(float64))
	}
	return ember.FromSlice(xs, ember.Shape{len(xs)})
}

// TestMoreDropouts: Dropout1d/2d zero whole channels and scale the rest
// by 1/(1-p); AlphaDropout sets dropped elements to α·a·(p-1) and maps
// kept ones to a·x + α·a·p, a = ((α²p+1)(1-p))^-½ (ATen's alpha_dropout,
// α = 1.7580993408473766), with the gradient a on kept elements; all are
// the identity in evaluation mode and for p = 0, zero for p = 1; reprs
// are PyTorch's.
func TestMoreDropouts(t *testing.T) {
	for _, dev := range allDevices() {
		on := ember.On(dev)
		for _, c := range []struct {
			m     *nn.Dropout
			shape ember.Shape
			repr  string
		}{
			{nn.NewDropout1d(0.5), ember.Shape{4, 6, 5}, "Dropout1d(p=0.5, inplace=False)"},
			{nn.NewDropout1d(0.5), ember.Shape{6, 5}, "Dropout1d(p=0.5, inplace=False)"},
			{nn.NewDropout2d(0.3), ember.Shape{4, 6, 3, 2}, "Dropout2d(p=0.3, inplace=False)"},
			{nn.NewDropout2d(0.3), ember.Shape{4, 6, 5}, "Dropout2d(p=0.3, inplace=False)"},
			{nn.NewDropout3d(0.5), ember.Shape{4, 6, 2, 2, 2}, "Dropout3d(p=0.5, inplace=False)"},
			{nn.NewDropout3d(0.5), ember.Shape{6, 2, 1, 3}, "Dropout3d(p=0.5, inplace=False)"},
		} {
			if got := c.m.String(); got != c.repr {
				t.Fatalf("repr %q, PyTorch %q", got, c.repr)
			}
			c.m.To(dev)
			x := ember.Arange(1, float64(c.shape.NumElements())+1, 1, on, ember.Dtype(ember.Float32)).Reshape(c.shape...)
			y := c.m.Forward(x).Float64s()
			xv := x.Float64s()
			chans := c.shape[0] * c.shape[1]
			if len(c.shape) == 2 || c.repr[:9] == "Dropout3d" && len(c.shape) == 4 { // unbatched
				chans = c.shape[0]
			}
			per := len(xv) / chans
			dropped := 0
			for ch := 0; ch < chans; ch++ {
				zero := y[ch*per] == 0
				if zero {
					dropped++
				}
				for j := ch * per; j < (ch+1)*per; j++ {
					want := xv[j] / (1 - c.m.P)
					if zero {
						want = 0
					}
					if math.Abs(y[j]-want) > 1e-5*want {
						t.Fatalf("%s on %v: channel %d element %v, want %v", c.repr, dev, ch, y[j], want)
					}
				}
			}
			if dropped == 0 || dropped == chans {
				t.Errorf("%s: %d of %d channels dropped", c.repr, dropped, chans)
			}
			c.m.Eval()
			near(t, c.repr+" eval", c.m.Forward(x).Float64s(), xv)
		}
		a := nn.NewAlphaDropout(0.2)
		if got := a.String(); got != "AlphaDropout(p=0.2, inplace=False)" {
			t.Fatalf("repr %q", got)
		}
		const alpha, p = 1.7580993408473766, 0.2
		k := 1 / math.Sqrt((alpha*alpha*p+1)*(1-p))
		x := ember.Linspace(-2, 3, 400, on, ember.Dtype(ember.Float64)).SetRequiresGrad(true)
		y := a.Forward(x)
		y.Sum().Backward()
		yv, xv, g := y.Float64s(), x.Float64s(), x.Grad().Float64s()
		dropped := 0
		for i := range yv {
			kept := k*xv[i] + alpha*k*p
			switch {
			case math.Abs(yv[i]-alpha*k*(p-1)) < 1e-12 && g[i] == 0:
				dropped++
			case math.Abs(yv[i]-kept) < 1e-12 && math.Abs(g[i]-k) < 1e-12:
			default:
				t.Fatalf("AlphaDropout(%v) = %v (grad %v): neither dropped %v nor kept %v", xv[i], yv[i], g[i], alpha*k*(p-1), kept)
			}
		}
		if dropped < 40 || dropped > 120 {
			t.Errorf("AlphaDropout(0.2) dropped %d of 400", dropped)
		}
		// FeatureAlphaDropout: the same two maps, one per channel
		fa := nn.NewFeatureAlphaDropout(p)
		if got := fa.String(); got != "FeatureAlphaDropout(p=0.2, inplace=False)" {
			t.Fatalf("repr %q", got)
		}
		xf := x.Detach().Reshape(20, 4, 5)
		yf, xv2 := fa.Forward(xf).Float64s(), xf.Float64s()
		droppedCh := 0
		for ch := 0; ch < 80; ch++ {
			drop := math.Abs(yf[ch*5]-alpha*k*(p-1)) < 1e-12 && math.Abs(xv2[ch*5]*k+alpha*k*p-alpha*k*(p-1)) > 1e-9
			if drop {
				droppedCh++
			}
			for j := ch * 5; j < ch*5+5; j++ {
				want := k*xv2[j] + alpha*k*p
				if drop {
					want = alpha * k * (p - 1)
				}
				if math.Abs(yf[j]-want) > 1e-12 {
					t.Fatalf("FeatureAlphaDropout channel %d: %v, want %v", ch, yf[j], want)
				}
			}
		}
		if droppedCh < 4 || droppedCh > 32 {
			t.Errorf("FeatureAlphaDropout(0.2) dropped %d of 80 channels", droppedCh)
		}
		near(t, "AlphaDropout p=1", nn.NewAlphaDropout(1).Forward(x).Float64s(), make([]float64, 400))
		near(t, "Dropout2d p=1", nn.NewDropout2d(1).Forward(x.Reshape(4, 100)).Float64s(), make([]float64, 400))
		near(t, "AlphaDropout p=0", nn.NewAlphaDropout(0).Forward(x).Float64s(), xv)
		a.Eval()
		near(t, "AlphaDropout eval", a.Forward(x).Float64s(), xv)
	}
}

// TestMoreLayerErrors: argument and shape rules, with PyTorch's messages.
func TestMoreLayerErrors(t *testing.T) {
	msg := func(what, want string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		var got string
		switch e := err.(type) {
		case *ember.ValueError:
			got = e.Msg
		case *ember.ShapeError:
			got = e.Msg
		}
		if got != want {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	x2 := ember.Zeros(ember.Shape{2, 6})
	msg("hardtanh", "max_val (1) must be greater than min_val (1)", testenv.Raises[*ember.ValueError](t, "hardtanh", func() { nn.NewHardtanh(1, 1) }))
	msg("softmax2d", "Softmax2d: expected input to be 3D or 4D, got 2D instead", testenv.Raises[*ember.ShapeError](t, "softmax2d", func() { nn.NewSoftmax2d().Forward(x2) }))
	msg("unflatten", "unflatten: Provided sizes [2, 4] don't multiply up to the size of dim 1 (6) in the input tensor", testenv.Raises[*ember.ShapeError](t, "unflatten", func() { nn.NewUnflatten(1, 2, 4).Forward(x2) }))
	msg("shuffle dims", "channel_shuffle expects input to have at least 3 dimensions, but got input with sizes [2, 6]", testenv.Raises[*ember.ShapeError](t, "shuffle", func() { nn.NewChannelShuffle(2).Forward(x2) }))
	msg("shuffle groups", "Number of channels must be divisible by groups. Got 6 channels and 4 groups.", testenv.Raises[*ember.ShapeError](t, "shuffle", func() { nn.NewChannelShuffle(4).Forward(x2.Reshape(2, 6, 1)) }))
	msg("shuffle 0", "Number of groups to divide channels in must be positive. Value of groups:0", testenv.Raises[*ember.ValueError](t, "shuffle", func() { nn.NewChannelShuffle(0) }))
	msg("lrn", "Expected 3D or higher dimensionality input (got 2 dimensions)", testenv.Raises[*ember.ValueError](t, "lrn", func() { nn.NewLocalResponseNorm(2, 1e-4, 0.75, 1).Forward(x2) }))
	msg("in1d", "expected 2D or 3D input (got 4D input)", testenv.Raises[*ember.ValueError](t, "in1d", func() { nn.NewInstanceNorm1d(6, false, false).Forward(x2.Reshape(1, 1, 2, 6)) }))
	msg("in2d", "expected 3D or 4D input (got 2D input)", testenv.Raises[*ember.ValueError](t, "in2d", func() { nn.NewInstanceNorm2d(6, false, false).Forward(x2) }))
	msg("in affine", "expected input's size at dim=1 to match num_features (3), but got: 2.", testenv.Raises[*ember.ValueError](t, "in affine", func() { nn.NewInstanceNorm1d(3, true, false).Forward(x2.Reshape(3, 2, 2)) }))
	msg("in spatial", "Expected more than 1 spatial element when training, got input size [2, 6, 1]", testenv.Raises[*ember.ValueError](t, "in spatial", func() { nn.NewInstanceNorm1d(6, false, false).Forward(x2.Reshape(2, 6, 1)) }))
	msg("dropout1d", "dropout1d: Expected 2D or 3D input, but received a 4D input. Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).",
		testenv.Raises[*ember.ShapeError](t, "dropout1d", func() { nn.NewDropout1d(0.5).Forward(x2.Reshape(1, 2, 3, 2)) }))
	msg("dropout2d 1-D", "Feature dropout requires at least 2 dimensions in the input", testenv.Raises[*ember.ShapeError](t, "dropout2d", func() { nn.NewDropout2d(0.5).Forward(ember.Ones(ember.Shape{3})) }))
	testenv.Raises[*ember.ValueError](t, "alpha p", func() { nn.NewAlphaDropout(1.5) })
	// P is a field: a P set out of [0, 1] after construction is refused at
	// Forward, as Dropout's (and PyTorch's functionals) are, in training
	// and evaluation alike, not drawn with a keep rate above 1
	for _, d := range []*nn.Dropout{nn.NewDropout1d(0.5), nn.NewDropout2d(0.5), nn.NewDropout3d(0.5), nn.NewAlphaDropout(0.5), nn.NewFeatureAlphaDropout(0.5)} {
		for _, p := range []float64{-0.5, 1.5, math.NaN()} {
			d.P = p
			d.Train(true)
			msg(fmt.Sprint(d, " train"), fmt.Sprintf("dropout probability has to be between 0 and 1, but got %v", p), testenv.Raises[*ember.ValueError](t, "p", func() { d.Forward(x2.Reshape(2, 6, 1)) }))
			d.Eval()
			testenv.Raises[*ember.ValueError](t, fmt.Sprint(d, " eval"), func() { d.Forward(x2.Reshape(2, 6, 1)) })
		}
	}
	// the modules print and keep the state dict names of PyTorch
	if sd := nn.NewInstanceNorm2d(3, true, true).StateDict(); len(sd) != 5 || sd["num_batches_tracked"] == nil {
		t.Errorf("InstanceNorm2d state dict %v", sd)
	}
}

// TestMoreLayersMeta: the new layers give PyTorch's shapes on the meta
// device, where nothing is computed.
func TestMoreLayersMeta(t *testing.T) {
	x := ember.Empty(ember.Shape{2, 6, 4, 3}, ember.On(ember.Meta))
	for _, c := range []struct {
		m    nn.Module
		want ember.Shape
	}{
		{nn.NewHardtanh(-1, 1), ember.Shape{2, 6, 4, 3}},
		{nn.NewReLU6(), ember.Shape{2, 6, 4, 3}},
		{nn.NewSoftmin(1), ember.Shape{2, 6, 4, 3}},
		{nn.NewSoftmax2d(), ember.Shape{2, 6, 4, 3}},
		{nn.NewUnflatten(1, 3, -1), ember.Shape{2, 3, 2, 4, 3}},
		{nn.NewChannelShuffle(3), ember.Shape{2, 6, 4, 3}},
		{nn.NewLocalResponseNorm(3, 1e-4, 0.75, 1), ember.Shape{2, 6, 4, 3}},
		{nn.NewInstanceNorm2d(6, true, true), ember.Shape{2, 6, 4, 3}},
		{nn.NewLPPool2d(2, [2]int{2, 2}, [2]int{}, false), ember.Shape{2, 6, 2, 1}},
		{nn.NewFeatureAlphaDropout(0.5), ember.Shape{2, 6, 4, 3}},
		{nn.NewDropout2d(0.5), ember.Shape{2, 6, 4, 3}},
		{nn.NewAlphaDropout(0.5), ember.Shape{2, 6, 4, 3}},
	} {
		c.m.To(ember.Meta)
		if got := c.m.Forward(x).Shape(); !got.Equal(c.want) {
			t.Errorf("%v on meta: shape %v, want %v", c.m, got, c.want)
		}
	}
}
