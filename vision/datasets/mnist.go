// Package datasets loads image classification datasets: MNIST and
// Fashion-MNIST from their IDX files.
package datasets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/emberml/ember"
)

// DefaultFashionMNISTDir is where the Debian package dataset-fashion-mnist
// installs the files.
const DefaultFashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// DefaultMNISTDir is where MNIST is looked for by default.
const DefaultMNISTDir = "/usr/share/datasets/mnist"

// FashionMNISTClasses are the Fashion-MNIST class names by label.
var FashionMNISTClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// MNISTClasses are the MNIST class names by label.
var MNISTClasses = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// Option configures a dataset.
type Option func(*config)

type config struct{ dir string }

// Dir reads the IDX files from dir instead of the default location.
func Dir(dir string) Option { return func(c *config) { c.dir = dir } }

// MissingError reports that a dataset's files were not found.
type MissingError struct {
	Name    string // "fashion-mnist"
	Dir     string // where they were looked for
	File    string // the first missing file
	Package string // the Debian package that installs them, if any
}

func (e *MissingError) Error() string {
	msg := fmt.Sprintf("%s: %s not found in %s", e.Name, e.File, e.Dir)
	if e.Package != "" {
		msg += fmt.Sprintf("; install the Debian package %s, or set EMBER_DATA_DIR or the data directory option", e.Package)
	} else {
		msg += "; set EMBER_DATA_DIR or the data directory option"
	}
	return msg
}

// MNIST is an MNIST-format dataset: 28×28 grayscale images and labels.
// Get returns a float32 [1, 28, 28] image scaled to [0, 1] (as
// torchvision's ToTensor) and an int64 scalar label.
type MNIST struct {
	Name    string
	Classes []string
	Train   bool
	Rows    int
	Cols    int
	images  []byte
	labels  []byte
}

// FashionMNIST loads the train or test split of Fashion-MNIST. The files are
// looked for in the Dir option, else $EMBER_DATA_DIR/fashion-mnist (or
// $EMBER_DATA_DIR itself), else DefaultFashionMNISTDir.
func FashionMNIST(train bool, opts ...Option) (*MNIST, error) {
	return load("fashion-mnist", DefaultFashionMNISTDir, "dataset-fashion-mnist", FashionMNISTClasses, train, opts)
}

// LoadMNIST loads the train or test split of MNIST, looked for as FashionMNIST
// does, under the name "mnist".
func LoadMNIST(train bool, opts ...Option) (*MNIST, error) {
	return load("mnist", DefaultMNISTDir, "", MNISTClasses, train, opts)
}

// resolveDir returns the directory a dataset's files are read from.
func resolveDir(name, def string, files []string, c config) string {
	if c.dir != "" {
		return c.dir
	}
	if env := os.Getenv("EMBER_DATA_DIR"); env != "" {
		sub := filepath.Join(env, name)
		if _, err := os.Stat(sub); err == nil {
			return sub
		}
		return env
	}
	return def
}

func find(dir, base string) (string, bool) {
	for _, p := range []string{base + ".gz", base} {
		full := filepath.Join(dir, p)
		if _, err := os.Stat(full); err == nil {
			return full, true
		}
	}
	return "", false
}

func load(name, def, pkg string, classes []string, train bool, opts []Option) (*MNIST, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	split := "t10k"
	if train {
		split = "train"
	}
	imgBase, lblBase := split+"-images-idx3-ubyte", split+"-labels-idx1-ubyte"
	dir := resolveDir(name, def, nil, c)
	var paths [2]string
	for i, base := range []string{imgBase, lblBase} {
		p, ok := find(dir, base)
		if !ok {
			return nil, &MissingError{Name: name, Dir: dir, File: base + ".gz", Package: pkg}
		}
		paths[i] = p
	}
	img, err := ReadIDX(paths[0])
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &MissingError{Name: name, Dir: dir, File: imgBase, Package: pkg}
		}
		return nil, err
	}
	lbl, err := ReadIDX(paths[1])
	if err != nil {
		return nil, err
	}
	if len(img.Dims) != 3 || len(lbl.Dims) != 1 || img.Dims[0] != lbl.Dims[0] {
		return nil, &IDXError{Path: dir, Msg: fmt.Sprintf("images %v and labels %v do not pair up", img.Dims, lbl.Dims)}
	}
	for i, l := range lbl.Data {
		if int(l) >= len(classes) {
			return nil, &IDXError{Path: paths[1], Msg: fmt.Sprintf("label %d at %d is not below %d", l, i, len(classes))}
		}
	}
	return &MNIST{Name: name, Classes: classes, Train: train, Rows: img.Dims[1], Cols: img.Dims[2], images: img.Data, labels: lbl.Data}, nil
}

// Len is the number of samples.
func (m *MNIST) Len() int { return len(m.labels) }

// Get returns sample i: a float32 [1, Rows, Cols] image in [0, 1] and its
// int64 label as a 0-d tensor. A negative i counts from the end, as
// Python's indexing; an i outside the samples panics with an
// *ember.IndexError (as do Pixels and Label).
func (m *MNIST) Get(i int) (*ember.Tensor, *ember.Tensor) {
	i = m.index("datasets.MNIST.Get", i)
	px := m.Rows * m.Cols
	img := make([]float32, px)
	for j, b := range m.images[i*px : (i+1)*px] {
		img[j] = float32(b) / 255
	}
	return ember.FromSlice(img, ember.Shape{1, m.Rows, m.Cols}), ember.FromSlice([]int64{int64(m.labels[i])}, ember.Shape{})
}

// Pixels returns sample i's raw bytes (row-major, Rows×Cols).
func (m *MNIST) Pixels(i int) []byte {
	i = m.index("datasets.MNIST.Pixels", i)
	px := m.Rows * m.Cols
	return m.images[i*px : (i+1)*px]
}

// Label returns sample i's label.
func (m *MNIST) Label(i int) int { return int(m.labels[m.index("datasets.MNIST.Label", i)]) }

// index is Python's indexing of the samples: i in [-Len, Len), a negative
// i counting from the end.
func (m *MNIST) index(op string, i int) int {
	n := len(m.labels)
	if i < -n || i >= n {
		panic(&ember.IndexError{Op: op, Index: int64(i), Size: n})
	}
	if i < 0 {
		i += n
	}
	return i
}
