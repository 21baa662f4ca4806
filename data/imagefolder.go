package data

import (
	"errors"
	"fmt"
	"image"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/emberml/ember"
	"github.com/emberml/ember/vision/imageio"
)

// ImageExtensions are the file endings ImageFolder takes (any case), as
// torchvision.datasets.folder.IMG_EXTENSIONS.
var ImageExtensions = []string{".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"}

// ImageSample is one file of an ImageFolder and its class index.
type ImageSample struct {
	Path  string
	Class int
}

// ImageToTensor turns a decoded image into a sample tensor;
// transforms.Preset is one.
type ImageToTensor interface {
	Apply(img *image.RGBA, r *rand.Rand) *ember.Tensor
}

// ImageFolder is torchvision.datasets.ImageFolder: root/CLASS/**/FILE, one
// class per sub-folder in sorted order, the files of each class in
// torchvision's order (sorted folder paths, then sorted names; symbolic
// links followed). Images are decoded in Get, so a DataLoader's workers
// decode in parallel.
type ImageFolder struct {
	Root       string
	Classes    []string
	ClassToIdx map[string]int
	Samples    []ImageSample
	// Skipped lists the files left out with SkipBadImages, each a
	// *imageio.DecodeError naming its path.
	Skipped []error

	transform ImageToTensor
	seed      uint64
	epoch     int
	orient    bool
}

// ImageFolderOption configures NewImageFolder.
type ImageFolderOption func(*imageFolderConfig)

type imageFolderConfig struct {
	transform ImageToTensor
	seed      uint64
	skip      bool
	orient    bool
}

// WithImageTransform sets the per-sample transform (default: ToTensor's
// [3, H, W] in [0, 1]); sample i of epoch e draws its randomness from
// (seed, e, i), so runs repeat.
func WithImageTransform(t ImageToTensor, seed uint64) ImageFolderOption {
	return func(c *imageFolderConfig) { c.transform, c.seed = t, seed }
}

// SkipBadImages leaves out files that are not images (their header does not
// decode) and lists them in Skipped, instead of failing.
func SkipBadImages() ImageFolderOption { return func(c *imageFolderConfig) { c.skip = true } }

// AutoOrientImages applies EXIF orientation when decoding (torchvision does
// not).
func AutoOrientImages() ImageFolderOption { return func(c *imageFolderConfig) { c.orient = true } }

// BadImagesError lists the files of an ImageFolder that are not images.
type BadImagesError struct{ Errs []error }

func (e *BadImagesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "data: ImageFolder: %d file(s) are not images (SkipBadImages leaves them out):", len(e.Errs))
	for i, err := range e.Errs {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Errs)-10)
			break
		}
		fmt.Fprintf(&b, "\n  %v", err)
	}
	return b.String()
}

func (e *BadImagesError) Unwrap() []error { return e.Errs }

// NewImageFolder lists root. Every listed file's header is checked (in
// parallel); files that are not images are an error naming them, or, with
// SkipBadImages, left out. A class folder with no image is an error, as in
// torchvision. A file whose header decodes but whose data is corrupt fails
// in Get with an *imageio.DecodeError naming it (a panic, which the
// DataLoader hands to its caller).
func NewImageFolder(root string, opts ...ImageFolderOption) (*ImageFolder, error) {
	var c imageFolderConfig
	for _, o := range opts {
		o(&c)
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("data: ImageFolder: %w", err)
	}
	d := &ImageFolder{Root: root, ClassToIdx: map[string]int{}, transform: c.transform, seed: c.seed, orient: c.orient}
	for _, e := range ents {
		if isDir(filepath.Join(root, e.Name())) {
			d.Classes = append(d.Classes, e.Name())
		}
	}
	sort.Strings(d.Classes) // Python's sorted: by code point, as UTF-8 bytes sort
	if len(d.Classes) == 0 {
		return nil, fmt.Errorf("data: ImageFolder: couldn't find any class folder in %s", root)
	}
	var empty []string
	for i, cls := range d.Classes {
		d.ClassToIdx[cls] = i
		files, err := classFiles(filepath.Join(root, cls))
		if err != nil {
			return nil, fmt.Errorf("data: ImageFolder: %w", err)
		}
		if len(files) == 0 {
			empty = append(empty, cls)
		}
		for _, f := range files {
			d.Samples = append(d.Samples, ImageSample{f, i})
		}
	}
	if len(empty) > 0 {
		return nil, fmt.Errorf("data: ImageFolder: found no valid file for the classes %s. Supported extensions are: %s",
			strings.Join(empty, ", "), strings.Join(ImageExtensions, ", "))
	}
	bad := checkHeaders(d.Samples)
	if len(bad) > 0 {
		var errs []error
		keep := d.Samples[:0]
		for i, s := range d.Samples {
			if err, ok := bad[i]; ok {
				errs = append(errs, err)
				continue
			}
			keep = append(keep, s)
		}
		if !c.skip {
			return nil, &BadImagesError{errs}
		}
		d.Samples, d.Skipped = keep, errs
	}
	return d, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p) // follows links, as os.scandir's is_dir()
	return err == nil && st.IsDir()
}

func hasImageExt(name string) bool {
	l := strings.ToLower(name)
	for _, e := range ImageExtensions {
		if strings.HasSuffix(l, e) {
			return true
		}
	}
	return false
}

// classFiles is torchvision's make_dataset for one class: sorted(os.walk(dir,
// followlinks=True)) — folders by their path string — then each folder's
// sorted file names.
func classFiles(dir string) ([]string, error) {
	type folder struct {
		path  string
		files []string
	}
	var folders []folder
	seen := map[string]bool{}
	var walk func(p string) error
	walk = func(p string) error {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		if seen[real] { // a link cycle
			return nil
		}
		seen[real] = true
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		f := folder{path: p}
		var subs []string
		for _, e := range ents {
			full := filepath.Join(p, e.Name())
			if e.IsDir() || (e.Type()&fs.ModeSymlink != 0 && isDir(full)) {
				subs = append(subs, full)
			} else {
				f.files = append(f.files, e.Name())
			}
		}
		folders = append(folders, f)
		for _, s := range subs {
			if err := walk(s); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(dir); err != nil {
		return nil, err
	}
	sort.Slice(folders, func(i, j int) bool { return folders[i].path < folders[j].path })
	var out []string
	for _, f := range folders {
		sort.Strings(f.files)
		for _, n := range f.files {
			if hasImageExt(n) {
				out = append(out, filepath.Join(f.path, n))
			}
		}
	}
	return out, nil
}

// checkHeaders decodes every file's header in parallel; it returns the
// failures by sample index.
func checkHeaders(samples []ImageSample) map[int]error {
	var (
		mu  sync.Mutex
		bad = map[int]error{}
		wg  sync.WaitGroup
		ch  = make(chan int)
	)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if err := imageio.CheckHeader(samples[i].Path); err != nil {
					mu.Lock()
					bad[i] = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := range samples {
		ch <- i
	}
	close(ch)
	wg.Wait()
	return bad
}

// Len is the number of images.
func (d *ImageFolder) Len() int { return len(d.Samples) }

// SetEpoch selects the epoch random transforms draw for.
func (d *ImageFolder) SetEpoch(e int) { d.epoch = e }

// Get decodes image i and transforms it; the target is its class index (an
// Int64 scalar). A file that fails to decode panics with its
// *imageio.DecodeError. A negative i counts from the end, as Python's
// indexing; an i outside the samples panics with an *ember.IndexError.
func (d *ImageFolder) Get(i int) (*ember.Tensor, *ember.Tensor) {
	i = sampleIndex("data.ImageFolder.Get", i, len(d.Samples))
	x, err := d.Load(i)
	if err != nil {
		panic(err)
	}
	return x, ember.FromSlice([]int64{int64(d.Samples[i].Class)}, ember.Shape{})
}

// Load is Get's input, with the decoding error returned (an i outside the
// samples panics with an *ember.IndexError, as in Get).
func (d *ImageFolder) Load(i int) (*ember.Tensor, error) {
	i = sampleIndex("data.ImageFolder.Load", i, len(d.Samples))
	var opts []imageio.Option
	if d.orient {
		opts = append(opts, imageio.AutoOrient())
	}
	img, err := imageio.Open(d.Samples[i].Path, opts...)
	if err != nil {
		var de *imageio.DecodeError
		if !errors.As(err, &de) {
			err = &imageio.DecodeError{Path: d.Samples[i].Path, Err: err}
		}
		return nil, err
	}
	if d.transform == nil {
		return imageToTensor(img), nil
	}
	r := rand.New(rand.NewPCG(d.seed^uint64(d.epoch)*0x9e3779b97f4a7c15, uint64(i)))
	return d.transform.Apply(img, r), nil
}

func imageToTensor(img *image.RGBA) *ember.Tensor {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	px := make([]float32, 3*h*w)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := img.PixOffset(img.Rect.Min.X+x, img.Rect.Min.Y+y)
			for c := 0; c < 3; c++ {
				px[(c*h+y)*w+x] = float32(img.Pix[o+c]) / 255
			}
		}
	}
	return ember.FromSlice(px, ember.Shape{3, h, w})
}
