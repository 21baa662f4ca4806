// Package tensorboard writes TensorBoard event files, as
// torch.utils.tensorboard.SummaryWriter: scalars, groups of scalars,
// histograms, images and text, which `tensorboard --logdir runs` shows.
//
// A file is a TFRecord stream (each record framed by its length and
// masked CRC-32C checksums) of Event protocol buffers, named
// events.out.tfevents.TIME.HOST.PID.N as TensorBoard expects; the first
// event carries the file version "brain.Event:2". ReadEvents reads such a
// file back, checking every CRC.
package tensorboard

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/tensorboard/tbpb"
	"google.golang.org/protobuf/proto"
)

var uid atomic.Int64

// flushEvery is how long an event may wait in the writer's buffer before
// it is written to the file: PyTorch's SummaryWriter(flush_secs=120).
var flushEvery = 120 * time.Second

// SummaryWriter writes events into a log directory. Its methods are safe
// for concurrent use. Events are buffered and reach the file at most two
// minutes after they are added (as PyTorch's flush_secs=120), or at Flush
// and Close. The first error is kept and returned by Flush and Close; the
// Add methods return it too.
type SummaryWriter struct {
	dir   string
	path  string
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	err   error
	sub   map[string]*SummaryWriter // AddScalars' per-tag writers
	now   func() time.Time
	timer *time.Timer // armed while events wait in w
}

// NewSummaryWriter creates dir (and its parents) and an event file in it.
func NewSummaryWriter(dir string) (*SummaryWriter, error) {
	return newWriter(dir, time.Now)
}

func newWriter(dir string, now func() time.Time) (*SummaryWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	t := now()
	name := fmt.Sprintf("events.out.tfevents.%010d.%s.%d.%d", t.Unix(), host, os.Getpid(), uid.Add(1)-1)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	s := &SummaryWriter{dir: dir, path: f.Name(), f: f, w: bufio.NewWriter(f), sub: map[string]*SummaryWriter{}, now: now}
	s.write(&tbpb.Event{WallTime: wall(t), What: &tbpb.Event_FileVersion{FileVersion: "brain.Event:2"}})
	if s.err == nil {
		s.err = s.flushLocked()
	}
	if s.err != nil {
		f.Close()
		return nil, s.err
	}
	return s, nil
}

func wall(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// Dir is the log directory.
func (s *SummaryWriter) Dir() string {
	if s == nil {
		return ""
	}
	return s.dir
}

// Path is the event file's path.
func (s *SummaryWriter) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

// errNil is the error of every method on a nil *SummaryWriter (one whose
// NewSummaryWriter failed), which was a nil dereference.
var errNil = fmt.Errorf("tensorboard: nil *SummaryWriter (NewSummaryWriter returned an error?)")

func (s *SummaryWriter) write(e *tbpb.Event) error {
	if s.err != nil {
		return s.err
	}
	b, err := proto.Marshal(e)
	if err != nil {
		s.err = err
		return err
	}
	s.err = writeRecord(s.w, b)
	return s.err
}

func (s *SummaryWriter) summary(step int64, vals ...*tbpb.Summary_Value) error {
	if s == nil {
		return errNil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return fmt.Errorf("tensorboard: %s: the writer is closed", s.dir)
	}
	err := s.write(&tbpb.Event{WallTime: wall(s.now()), Step: step, What: &tbpb.Event_Summary{Summary: &tbpb.Summary{Value: vals}}})
	if err == nil && s.timer == nil && s.w.Buffered() > 0 {
		s.timer = time.AfterFunc(flushEvery, s.timedFlush)
	}
	return err
}

// timedFlush writes the buffered events to the file, flushEvery after the
// first of them was added; without it a run logging a scalar an epoch
// showed nothing in TensorBoard until 4 KiB of events had accumulated, and
// lost them all when it was interrupted.
func (s *SummaryWriter) timedFlush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if s.f != nil && s.err == nil {
		s.err = s.w.Flush()
	}
}

// AddScalar records value under tag at step.
func (s *SummaryWriter) AddScalar(tag string, value float64, step int64) error {
	return s.summary(step, &tbpb.Summary_Value{Tag: tag, Value: &tbpb.Summary_Value_SimpleValue{SimpleValue: float32(value)}})
}

// AddScalars records several related scalars as PyTorch does: each in the
// event file of its own subdirectory DIR/MAIN_TAG_TAG (slashes in mainTag
// become underscores), all under the tag mainTag, so TensorBoard draws them
// in one chart.
func (s *SummaryWriter) AddScalars(mainTag string, values map[string]float64, step int64) error {
	if s == nil {
		return errNil
	}
	s.mu.Lock()
	closed := s.f == nil
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("tensorboard: %s: the writer is closed", s.dir)
	}
	tags := make([]string, 0, len(values))
	for k := range values {
		tags = append(tags, k)
	}
	sort.Strings(tags)
	for _, tag := range tags {
		dir := filepath.Join(s.dir, strings.ReplaceAll(mainTag, "/", "_")+"_"+tag)
		s.mu.Lock()
		w, ok := s.sub[dir]
		if !ok {
			var err error
			if w, err = newWriter(dir, s.now); err != nil {
				s.mu.Unlock()
				return err
			}
			s.sub[dir] = w
		}
		s.mu.Unlock()
		if err := w.AddScalar(mainTag, values[tag], step); err != nil {
			return err
		}
	}
	return nil
}

// HistogramBuckets are TensorFlow's default histogram bucket edges (and
// PyTorch's bins="tensorflow"): ±1e-12·1.1^k up to 1e20, and 0.
var HistogramBuckets = func() []float64 {
	var pos []float64
	for v := 1e-12; v < 1e20; v *= 1.1 {
		pos = append(pos, v)
	}
	out := make([]float64, 0, 2*len(pos)+1)
	for i := len(pos) - 1; i >= 0; i-- {
		out = append(out, -pos[i])
	}
	out = append(out, 0)
	return append(out, pos...)
}()

// AddHistogram records the distribution of values (a tensor of any shape)
// over HistogramBuckets, keeping the buckets from the first to the last
// non-empty one, as PyTorch's make_histogram.
func (s *SummaryWriter) AddHistogram(tag string, values *ember.Tensor, step int64) error {
	if values == nil {
		return fmt.Errorf("tensorboard: AddHistogram %s: nil tensor", tag)
	}
	var v []float64
	if err := ember.Try(func() { v = values.Cast(ember.Float64).Contiguous().Float64s() }); err != nil {
		return fmt.Errorf("tensorboard: AddHistogram %s: %w", tag, err) // (a meta tensor)
	}
	h, err := Histogram(v, HistogramBuckets)
	if err != nil {
		return err
	}
	return s.summary(step, &tbpb.Summary_Value{Tag: tag, Value: &tbpb.Summary_Value_Histo{Histo: h}})
}

// Histogram is PyTorch's make_histogram: counts of v in the half-open bins
// between consecutive edges (the last one closed, as numpy.histogram),
// trimmed to the non-empty range with one empty bucket kept on the left;
// BucketLimit holds each bucket's right edge.
func Histogram(v []float64, edges []float64) (*tbpb.HistogramProto, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("tensorboard: histogram of no values")
	}
	ok := len(edges) >= 2
	for i := 1; ok && i < len(edges); i++ {
		ok = edges[i] >= edges[i-1] // numpy's rule (false for a NaN)
	}
	if !ok {
		return nil, fmt.Errorf("tensorboard: histogram of %d edges: want at least two, non-decreasing", len(edges))
	}
	h := &tbpb.HistogramProto{Min: math.Inf(1), Max: math.Inf(-1), Num: float64(len(v))}
	counts := make([]float64, len(edges)-1)
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("tensorboard: histogram of a non-finite value %v", x)
		}
		h.Min, h.Max = math.Min(h.Min, x), math.Max(h.Max, x)
		h.Sum += x
		h.SumSquares += x * x
		if x < edges[0] || x > edges[len(edges)-1] {
			continue
		}
		// the first edge > x: x on an edge belongs to the bin it opens (the
		// last of equal edges'), numpy's searchsorted(side='right')
		i := sort.Search(len(edges), func(j int) bool { return edges[j] > x })
		counts[min(i-1, len(counts)-1)]++
	}
	first, last := -1, -1
	for i, c := range counts {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil, fmt.Errorf("tensorboard: histogram: every value outside the bins")
	}
	// numpy: counts[start-1:end], limits[start:end+1] with start = first
	// non-empty bin; a leading zero bin when start is 0
	if first > 0 {
		h.Bucket = append(h.Bucket, counts[first-1:last+1]...)
		h.BucketLimit = append(h.BucketLimit, edges[first:last+2]...)
	} else {
		h.Bucket = append([]float64{0}, counts[:last+1]...)
		h.BucketLimit = append(h.BucketLimit, edges[0:last+2]...)
	}
	return h, nil
}

// AddImage records a [3, H, W] (or [1, H, W], or [H, W]) image with values
// in [0, 1], PNG-encoded; values are scaled by 255, clipped and truncated
// to bytes as PyTorch does.
func (s *SummaryWriter) AddImage(tag string, img *ember.Tensor, step int64) error {
	if img == nil {
		return fmt.Errorf("tensorboard: AddImage %s: nil tensor", tag)
	}
	sh := img.Shape()
	c, h, w := 1, 0, 0
	switch len(sh) {
	case 2:
		h, w = sh[0], sh[1]
	case 3:
		c, h, w = sh[0], sh[1], sh[2]
	}
	if (c != 1 && c != 3) || h == 0 || w == 0 {
		return fmt.Errorf("tensorboard: AddImage %s: shape %v is not [3, H, W], [1, H, W] or [H, W]", tag, sh)
	}
	var px []float32
	if err := ember.Try(func() { px = img.Cast(ember.Float32).Contiguous().Float32s() }); err != nil {
		return fmt.Errorf("tensorboard: AddImage %s: %w", tag, err) // (a meta tensor)
	}
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			for k := 0; k < 3; k++ {
				v := px[(min(k, c-1)*h+y)*w+x] * 255
				rgba.Pix[(y*w+x)*4+k] = uint8(min(max(v, 0), 255))
			}
			rgba.Pix[(y*w+x)*4+3] = 255
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, rgba); err != nil {
		return err
	}
	return s.summary(step, &tbpb.Summary_Value{Tag: tag, Value: &tbpb.Summary_Value_Image{Image: &tbpb.Summary_Image{
		Height: int32(h), Width: int32(w), Colorspace: 3, EncodedImageString: buf.Bytes()}}})
}

// AddText records text (Markdown) as PyTorch does: a string tensor for the
// "text" plugin under tag + "/text_summary".
func (s *SummaryWriter) AddText(tag, text string, step int64) error {
	return s.summary(step, &tbpb.Summary_Value{Tag: tag + "/text_summary",
		Metadata: &tbpb.SummaryMetadata{PluginData: &tbpb.SummaryMetadata_PluginData{PluginName: "text"}},
		Value: &tbpb.Summary_Value_Tensor{Tensor: &tbpb.TensorProto{Dtype: tbpb.DataType_DT_STRING,
			TensorShape: &tbpb.TensorShapeProto{Dim: []*tbpb.TensorShapeProto_Dim{{Size: 1}}},
			StringVal:   [][]byte{[]byte(text)}}}})
}

func (s *SummaryWriter) flushLocked() error {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if s.err == nil {
		if s.err = s.w.Flush(); s.err == nil {
			s.err = s.f.Sync()
		}
	}
	return s.err
}

// Flush writes buffered events to disk, in the subdirectories' files too.
func (s *SummaryWriter) Flush() error {
	if s == nil {
		return errNil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.err
	}
	for _, w := range s.sub {
		if err := w.Flush(); err != nil && s.err == nil {
			s.err = err
		}
	}
	return s.flushLocked()
}

// Close flushes and closes the event files.
func (s *SummaryWriter) Close() error {
	if s == nil {
		return errNil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.err
	}
	for _, w := range s.sub {
		if err := w.Close(); err != nil && s.err == nil {
			s.err = err
		}
	}
	s.flushLocked()
	if err := s.f.Close(); err != nil && s.err == nil {
		s.err = err
	}
	s.f = nil
	return s.err
}
