package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/emberml/ember"
	"github.com/emberml/ember/npy"
)

func runONNX(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c, _, err := rootCmd.Find(append([]string{"onnx"}, args[0]))
	if err != nil {
		t.Fatal(err)
	}
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			_ = sv.Replace(nil)
		} else if err := fl.Value.Set(fl.DefValue); err != nil {
			t.Fatalf("resetting --%s: %v", fl.Name, err)
		}
		fl.Changed = false
	})
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(append([]string{"onnx"}, args...))
	defer rootCmd.SetArgs(nil)
	err = rootCmd.Execute()
	return out.String(), err
}

const onnxTestdata = "../../onnx/testdata"

func TestONNXInfo(t *testing.T) {
	out, err := runONNX(t, "info", filepath.Join(onnxTestdata, "gpt2_block.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"opset:    14", "input: int64[2, 11]", "output: float32[2, 11, 97]", "MatMul", "ember lacks: nothing"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	suite := "/usr/share/libonnx-testdata/data/node/test_nonmaxsuppression_single_box/model.onnx"
	if _, err := os.Stat(suite); err == nil {
		out, err := runONNX(t, "info", suite)
		if err != nil || !strings.Contains(out, "ember lacks: NonMaxSuppression") {
			t.Errorf("info of an unsupported model: %v\n%s", err, out)
		}
	}
}

// TestONNXRun runs the GPT-2-style block on PyTorch's input and compares the
// .npy it writes with PyTorch's output.
func TestONNXRun(t *testing.T) {
	dir := t.TempDir()
	out, err := runONNX(t, "run", filepath.Join(onnxTestdata, "gpt2_block.onnx"),
		"--input", "input="+filepath.Join(onnxTestdata, "gpt2_block.input.npy"), "--output-dir", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got, err := npy.ReadFile(filepath.Join(dir, "output.npy"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := npy.ReadFile(filepath.Join(onnxTestdata, "gpt2_block.output.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !ember.AllClose(got, want, 1e-4, 1e-4) {
		t.Errorf("ember onnx run differs from PyTorch")
	}
	if _, err := runONNX(t, "run", filepath.Join(onnxTestdata, "gpt2_block.onnx"), "--input", "nope", "--output-dir", dir); err == nil {
		t.Error("a malformed --input was accepted")
	}
	// a misspelt name was reported as the real input missing; a repeated
	// one silently took the last file
	in := filepath.Join(onnxTestdata, "gpt2_block.input.npy")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--input", "inptu=" + in}, `the model has no input "inptu" (its inputs: input)`},
		{[]string{"--input", "input=" + in, "--input", "input=" + in}, "--input input given twice"},
	} {
		_, err := runONNX(t, append([]string{"run", filepath.Join(onnxTestdata, "gpt2_block.onnx"), "--output-dir", dir}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestONNXUnknownSubcommand: "ember onnx tets DIR" printed the help and
// exited 0, so a script's typo passed.
func TestONNXUnknownSubcommand(t *testing.T) {
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		rootCmd.SetOut(&out)
		rootCmd.SetErr(&out)
		rootCmd.SetArgs(append([]string{"onnx"}, args...))
		defer rootCmd.SetOut(nil)
		defer rootCmd.SetErr(nil)
		defer rootCmd.SetArgs(nil)
		err := rootCmd.Execute()
		return out.String(), err
	}
	if _, err := run("tets", "x"); err == nil || !strings.Contains(err.Error(), `unknown command "tets" for "ember onnx"`) {
		t.Errorf("ember onnx tets: %v, want an unknown-command error", err)
	}
	if out, err := run(); err != nil || !strings.Contains(out, "Available Commands:") {
		t.Errorf("ember onnx: %v\n%s; want the help", err, out)
	}
}

func TestONNXTest(t *testing.T) {
	base := "/usr/share/libonnx-testdata/data"
	if _, err := os.Stat(base); err != nil {
		t.Skip("needs Debian package libonnx-testdata")
	}
	out, err := runONNX(t, "test", base+"/node/test_relu", base+"/node/test_nonmaxsuppression_single_box", base+"/pytorch-operator")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"PASS        test_relu", "UNSUPPORTED test_nonmaxsuppression_single_box: onnx: unsupported op NonMaxSuppression",
		"36 passed, 0 failed, 1 unsupported"} {
		if !strings.Contains(out, want) {
			t.Errorf("onnx test output lacks %q:\n%s", want, out)
		}
	}
}

// TestONNXRunHalf: ember onnx run on the suite's float16 and bfloat16 Cast
// models: a float32 .npy fed to a bfloat16 input is rounded to it, a
// float16 output is written as '<f2' and a bfloat16 one as float32.
func TestONNXRunHalf(t *testing.T) {
	base := "/usr/share/libonnx-testdata/data/node/"
	if _, err := os.Stat(base); err != nil {
		t.Skip("needs Debian package libonnx-testdata")
	}
	dir := t.TempDir()
	vals := []float32{1.5, -2, 0.375, 65504, 3, -0.25, 8, 1024, -7, 0.5, 2, 6}
	x := filepath.Join(dir, "x.npy")
	if err := npy.WriteFile(x, ember.FromSlice(vals, ember.Shape{3, 4})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model string
		dt    ember.DType
	}{
		{"test_cast_FLOAT_to_FLOAT16", ember.Float16},
		{"test_cast_BFLOAT16_to_FLOAT", ember.Float32},
		{"test_cast_FLOAT_to_BFLOAT16", ember.Float32},
	} {
		out := filepath.Join(dir, tc.model)
		if o, err := runONNX(t, "run", base+tc.model+"/model.onnx", "--input", "input="+x, "--output-dir", out); err != nil {
			t.Fatalf("%s: %v\n%s", tc.model, err, o)
		}
		got, err := npy.ReadFile(filepath.Join(out, "output.npy"))
		if err != nil {
			t.Fatal(err)
		}
		want := vals
		if tc.model == "test_cast_BFLOAT16_to_FLOAT" || tc.model == "test_cast_FLOAT_to_BFLOAT16" {
			want = append([]float32(nil), vals...)
			want[3] = 65536 // 65504 rounds to bfloat16's 65536
		}
		if got.DType() != tc.dt || !slices.Equal(got.Float32s(), want) {
			t.Errorf("%s: %v %v, want %v %v", tc.model, got.DType(), got.Float32s(), tc.dt, want)
		}
	}
}

// TestONNXRunSequences: a sequence input takes one --input per tensor, a
// sequence output is written as NAME_0.npy, NAME_1.npy, ..., and an empty
// optional output writes no file (it crashed on a nil tensor).
func TestONNXRunSequences(t *testing.T) {
	base := "/usr/share/libonnx-testdata/data/node"
	if _, err := os.Stat(base); err != nil {
		t.Skip("needs Debian package libonnx-testdata")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.npy")
	if err := npy.WriteFile(a, ember.FromSlice([]float32{1, 2, 3}, nil)); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteFile(b, ember.FromSlice([]float32{4, 5}, ember.Shape{1, 2})); err != nil {
		t.Fatal(err)
	}
	out, err := runONNX(t, "run", filepath.Join(base, "test_sequence_map_identity_1_sequence", "model.onnx"),
		"--input", "x="+a, "--input", "x="+b, "--output-dir", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for i, want := range [][]float32{{1, 2, 3}, {4, 5}} {
		got, err := npy.ReadFile(filepath.Join(dir, "y_"+string(rune('0'+i))+".npy"))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !slices.Equal(got.Float32s(), want) {
			t.Errorf("y_%d = %v, want %v", i, got.Float32s(), want)
		}
	}
	if !strings.Contains(out, "y[1] float32 [1, 2] -> ") {
		t.Errorf("output lacks the second element's line:\n%s", out)
	}
	out, err = runONNX(t, "run", filepath.Join(base, "test_identity_opt", "model.onnx"), "--output-dir", dir)
	if err != nil || !strings.Contains(out, "opt_out: an empty optional (no file)") {
		t.Errorf("an empty optional output: %v\n%s", err, out)
	}
}
