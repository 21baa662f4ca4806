package nn

import (
	"math"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/weights"
)

func embeddingFixtures(t *testing.T) map[string]*ember.Tensor {
	f, err := weights.LoadSafetensors("../testdata/nn/embedding.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestEmbeddingMatchesTorch checks nn.Embedding (with and without
// padding_idx) against torch's lookups and weight gradients.
func TestEmbeddingMatchesTorch(t *testing.T) {
	f := embeddingFixtures(t)
	for _, dev := range devices() {
		for _, c := range []struct {
			name string
			m    *Embedding
		}{
			{"plain", NewEmbedding(10, 4)},
			{"pad1", NewEmbeddingPadded(10, 4, 1)},
			{"pad_neg", NewEmbeddingPadded(10, 4, -2)},
		} {
			if c.name != "plain" && c.m.Weight.Select(0, c.m.PaddingIdx).Abs().Sum().Item() != 0 {
				t.Errorf("%s: the padding row is not initialised to zero", c.name)
			}
			if err := c.m.LoadStateDict(map[string]*ember.Tensor{"weight": f[c.name+".weight"]}, true); err != nil {
				t.Fatal(err)
			}
			c.m.To(dev)
			y := c.m.Forward(f[c.name+".idx"].To(dev))
			close(t, c.name+" y on "+dev.String(), y.CPU(), f[c.name+".y"], 1e-7)
			y.Mul(f[c.name+".gout"].To(dev)).Sum().Backward()
			close(t, c.name+" grad on "+dev.String(), c.m.Weight.Grad().CPU(), f[c.name+".grad"], 1e-6)
		}
	}
}

func devices() []ember.Device {
	devs := []ember.Device{ember.CPU}
	for i := 0; i < ember.DeviceCount(); i++ {
		devs = append(devs, ember.CUDA(i))
	}
	return devs
}

// TestClipGradMatchesTorch checks ClipGradNorm (2, 1 and inf norms, and a
// bound above the norm) and ClipGradValue against torch.nn.utils.
func TestClipGradMatchesTorch(t *testing.T) {
	f := embeddingFixtures(t)
	for _, dev := range devices() {
		for _, c := range []struct {
			name      string
			max, norm float64
		}{{"l2", 1.5, 2}, {"l1", 2, 1}, {"inf", 0.5, math.Inf(1)}, {"big", 100, 2}} {
			ps := []*ember.Tensor{ember.Zeros(ember.Shape{3, 4}, ember.On(dev), ember.WithGrad()), ember.Zeros(ember.Shape{5}, ember.On(dev), ember.WithGrad()),
				ember.Zeros(ember.Shape{2}, ember.On(dev), ember.WithGrad())} // the last has no gradient
			ps[0].SetGrad(f["clip.g1"].To(dev).Clone())
			ps[1].SetGrad(f["clip.g2"].To(dev).Clone())
			tot := ClipGradNorm(ps, c.max, c.norm)
			close(t, c.name+" total on "+dev.String(), tot.Reshape(1).CPU(), f["clip."+c.name+".total"], 1e-6)
			close(t, c.name+" g1 on "+dev.String(), ps[0].Grad().CPU(), f["clip."+c.name+".g1"], 1e-6)
			close(t, c.name+" g2 on "+dev.String(), ps[1].Grad().CPU(), f["clip."+c.name+".g2"], 1e-6)
		}
		p := ember.Zeros(ember.Shape{3, 4}, ember.On(dev), ember.WithGrad())
		p.SetGrad(f["clip.g1"].To(dev).Clone())
		ClipGradValue([]*ember.Tensor{p}, 0.5)
		close(t, "clip value on "+dev.String(), p.Grad().CPU(), f["clip.value.g1"], 0)
	}
}
