package tensorboard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/tensorboard/tbpb"
)

// The CRC-32C test vectors of RFC 3720, appendix B.4, and the classic check value.
func TestCRC32CVectors(t *testing.T) {
	inc, dec := make([]byte, 32), make([]byte, 32)
	for i := range inc {
		inc[i], dec[i] = byte(i), byte(31-i)
	}
	for _, c := range []struct {
		in   []byte
		want uint32
	}{
		{make([]byte, 32), 0x8A9136AA},
		{bytes.Repeat([]byte{0xFF}, 32), 0x62A8AB43},
		{inc, 0x46DD794E},
		{dec, 0x113FDB5C},
		{[]byte("123456789"), 0xE3069283},
	} {
		if got := CRC32C(c.in); got != c.want {
			t.Errorf("CRC32C(%x) = %#08x, want %#08x", c.in, got, c.want)
		}
	}
	// masking, worked by hand: rotr15(0xE3069283) = 0x2507C60D; + 0xa282ead8 = 0xC78AB0E5
	if got := MaskedCRC32C([]byte("123456789")); got != 0xC78AB0E5 {
		t.Errorf("masked %#08x", got)
	}
}

func TestRecordFraming(t *testing.T) {
	var buf bytes.Buffer
	writeRecord(&buf, []byte("abc"))
	writeRecord(&buf, nil)
	b := buf.Bytes()
	if len(b) != 16+3+16 || binary.LittleEndian.Uint64(b) != 3 || string(b[12:15]) != "abc" {
		t.Fatalf("framing % x", b)
	}
	recs, err := ReadRecords(bytes.NewReader(b))
	if err != nil || len(recs) != 2 || string(recs[0]) != "abc" || len(recs[1]) != 0 {
		t.Fatalf("%q %v", recs, err)
	}
	for _, i := range []int{0, 9, 13, 16} { // length, its CRC, data, data CRC
		bad := append([]byte(nil), b...)
		bad[i] ^= 1
		var re *RecordError
		if _, err := ReadRecords(bytes.NewReader(bad)); !errors.As(err, &re) {
			t.Errorf("flipped byte %d: %v", i, err)
		}
	}
	if _, err := ReadRecords(bytes.NewReader(b[:20])); err == nil {
		t.Error("a cut record read")
	}
}

func readAll(t *testing.T, dir string) []*tbpb.Event {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	if len(files) != 1 {
		t.Fatalf("%d event files in %s", len(files), dir)
	}
	if !regexp.MustCompile(`^events\.out\.tfevents\.\d{10}\.[^.]+.*\.\d+\.\d+$`).MatchString(filepath.Base(files[0])) {
		t.Errorf("file name %s", filepath.Base(files[0]))
	}
	evs, err := ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[0].GetFileVersion() != "brain.Event:2" {
		t.Fatalf("first event %v", evs)
	}
	return evs[1:]
}

func TestSummaryWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "exp")
	w, err := NewSummaryWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.AddScalar("loss/train", 0.25, 3)
	w.AddScalars("acc", map[string]float64{"train": 0.5, "test": 0.75}, 3)
	w.AddHistogram("w", ember.FromSlice([]float32{0.5, -2, 0, 3}, ember.Shape{2, 2}), 4)
	img := ember.FromSlice([]float32{0, 0.5, 1, 2 /* G */, 0, 0, 0, 0 /* B */, 1, 1, 1, 1}, ember.Shape{3, 2, 2})
	w.AddImage("img", img, 5)
	w.AddText("note", "hello *world*", 6)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.AddScalar("x", 1, 1) == nil {
		t.Error("write after Close")
	}
	evs := readAll(t, dir)
	if len(evs) != 4 {
		t.Fatalf("%d events", len(evs))
	}
	v := evs[0].GetSummary().Value[0]
	if evs[0].Step != 3 || v.Tag != "loss/train" || v.GetSimpleValue() != 0.25 || evs[0].WallTime < 1e9 {
		t.Errorf("scalar %v", evs[0])
	}
	for tag, want := range map[string]float32{"train": 0.5, "test": 0.75} {
		ev := readAll(t, filepath.Join(dir, "acc_"+tag))
		if len(ev) != 1 || ev[0].GetSummary().Value[0].Tag != "acc" || ev[0].GetSummary().Value[0].GetSimpleValue() != want {
			t.Errorf("scalars %s: %v", tag, ev)
		}
	}
	h := evs[1].GetSummary().Value[0].GetHisto()
	if h.Min != -2 || h.Max != 3 || h.Num != 4 || h.Sum != 1.5 || h.SumSquares != 13.25 {
		t.Errorf("histogram stats %v", h)
	}
	total := 0.0
	for _, c := range h.Bucket {
		total += c
	}
	if total != 4 || len(h.Bucket) != len(h.BucketLimit) {
		t.Errorf("histogram buckets: %v counts over %d limits", total, len(h.BucketLimit))
	}
	im := evs[2].GetSummary().Value[0].GetImage()
	dec, err := png.Decode(bytes.NewReader(im.EncodedImageString))
	if err != nil || im.Width != 2 || im.Height != 2 || im.Colorspace != 3 {
		t.Fatalf("image %v %v", im, err)
	}
	// 0.5·255 = 127.5 truncates to 127; 2 clips to 255
	if r, _, b, _ := dec.At(1, 0).RGBA(); r>>8 != 127 || b>>8 != 255 {
		t.Errorf("pixel (1,0) r %d b %d", r>>8, b>>8)
	}
	if r, _, _, _ := dec.At(1, 1).RGBA(); r>>8 != 255 {
		t.Errorf("pixel (1,1) r %d", r>>8)
	}
	tv := evs[3].GetSummary().Value[0]
	if tv.Tag != "note/text_summary" || tv.Metadata.PluginData.PluginName != "text" || string(tv.GetTensor().StringVal[0]) != "hello *world*" ||
		tv.GetTensor().Dtype != tbpb.DataType_DT_STRING || tv.GetTensor().TensorShape.Dim[0].Size != 1 {
		t.Errorf("text %v", tv)
	}
}

// numpy.histogram([1.5, 2, 2.5, 3.99], [0, 1, 2, 3, 4]) = [0, 1, 2, 1], and
// PyTorch's trimming keeps one empty bucket before the first full one.
func TestHistogramByHand(t *testing.T) {
	h, err := Histogram([]float64{1.5, 2, 2.5, 3.99}, []float64{0, 1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if !eq(h.Bucket, []float64{0, 1, 2, 1}) || !eq(h.BucketLimit, []float64{1, 2, 3, 4}) {
		t.Errorf("buckets %v limits %v", h.Bucket, h.BucketLimit)
	}
	if math.Abs(h.SumSquares-28.4201) > 1e-12 || math.Abs(h.Sum-9.99) > 1e-12 {
		t.Errorf("sums %v %v", h.Sum, h.SumSquares)
	}
	// first bin full: a zero bucket is prepended; the last edge is closed
	h, _ = Histogram([]float64{0, 4}, []float64{0, 1, 2, 3, 4})
	if !eq(h.Bucket, []float64{0, 1, 0, 0, 1}) || !eq(h.BucketLimit, []float64{0, 1, 2, 3, 4}) {
		t.Errorf("buckets %v limits %v", h.Bucket, h.BucketLimit)
	}
	if _, err := Histogram([]float64{math.NaN()}, HistogramBuckets); err == nil {
		t.Error("NaN accepted")
	}
	// equal edges: numpy.histogram([0, 1, 1.5, 2], [0, 1, 1, 2]) = [1, 0, 3]
	// (and the first bin full: a zero bucket first)
	if h, err := Histogram([]float64{0, 1, 1.5, 2}, []float64{0, 1, 1, 2}); err != nil || !eq(h.Bucket, []float64{0, 1, 0, 3}) || !eq(h.BucketLimit, []float64{0, 1, 1, 2}) {
		t.Errorf("equal edges: %v %v", h, err)
	}
	for _, edges := range [][]float64{nil, {1}, {2, 1}, {0, 2, 1}, {0, math.NaN(), 2}} {
		if _, err := Histogram([]float64{1}, edges); err == nil {
			t.Errorf("edges %v accepted", edges)
		}
	}
	if n := len(HistogramBuckets); n != 1549 || HistogramBuckets[774] != 0 {
		t.Errorf("%d default buckets, middle %v", n, HistogramBuckets[774])
	}
}

func eq(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCorruptEventFile(t *testing.T) {
	dir := t.TempDir()
	w, _ := NewSummaryWriter(dir)
	w.AddScalar("a", 1, 1)
	w.Close()
	b, _ := os.ReadFile(w.Path())
	b[len(b)-6] ^= 0x40
	os.WriteFile(w.Path(), b, 0o644)
	evs, err := ReadEvents(w.Path())
	if err == nil || !strings.Contains(err.Error(), "data CRC") || len(evs) != 1 {
		t.Errorf("%d events, err %v", len(evs), err)
	}
}

// TestWriterRefusesBadTensors: a nil tensor and one without data (meta)
// are errors from AddHistogram and AddImage, not panics.
func TestWriterRefusesBadTensors(t *testing.T) {
	w, err := NewSummaryWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	meta := ember.Ones(ember.Shape{3, 2, 2}, ember.On(ember.Meta))
	for name, f := range map[string]func() error{
		"histogram nil":  func() error { return w.AddHistogram("h", nil, 0) },
		"histogram meta": func() error { return w.AddHistogram("h", meta, 0) },
		"image nil":      func() error { return w.AddImage("i", nil, 0) },
		"image meta":     func() error { return w.AddImage("i", meta, 0) },
	} {
		if err := ember.Try(func() {
			if err := f(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}); err != nil {
			t.Errorf("%s: panicked: %v", name, err)
		}
	}
}

// TestHugeRecordHeader: a header claiming the largest record, with no data
// behind it, is "cut short" without allocating what it claims.
func TestHugeRecordHeader(t *testing.T) {
	var hdr [12]byte
	binary.LittleEndian.PutUint64(hdr[:], MaxRecord)
	binary.LittleEndian.PutUint32(hdr[8:], MaskedCRC32C(hdr[:8]))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadRecords(bytes.NewReader(hdr[:]))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "data cut short") {
		t.Fatalf("err %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("%d KiB allocated for a 12-byte stream", got>>10)
	}
}

// FuzzReadRecords: any stream gives records or a *RecordError, and
// records written back read back the same.
func FuzzReadRecords(f *testing.F) {
	var buf bytes.Buffer
	for _, r := range [][]byte{{}, []byte("event"), bytes.Repeat([]byte{7}, 300)} {
		if err := writeRecord(&buf, r); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:20])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := ReadRecords(bytes.NewReader(b))
		if err != nil {
			if _, ok := err.(*RecordError); !ok {
				t.Fatalf("%T %v", err, err)
			}
			return
		}
		var w bytes.Buffer
		for _, r := range recs {
			if err := writeRecord(&w, r); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(w.Bytes(), b) {
			t.Fatalf("%d records read from %d bytes write back as %d", len(recs), len(b), w.Len())
		}
	})
}

// Events reach the file flushEvery after they are added, without Flush, as
// PyTorch's SummaryWriter(flush_secs=120): a scalar an epoch used to stay
// in the buffer until 4 KiB had accumulated (or Close), so TensorBoard
// showed nothing of a running job and an interrupted one lost it.
func TestTimedFlush(t *testing.T) {
	defer func(d time.Duration) { flushEvery = d }(flushEvery)
	flushEvery = 20 * time.Millisecond
	s, err := NewSummaryWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	scalars := func() (n int) {
		evs, err := ReadEvents(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.GetSummary() != nil {
				n++
			}
		}
		return n
	}
	for step := range 3 {
		if err := s.AddScalar("loss", 1, int64(step)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for scalars() != step+1 {
			if time.Now().After(deadline) {
				t.Fatalf("step %d: %d scalar events in the file, want %d", step, scalars(), step+1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * flushEvery) // a timer left armed must not touch the closed file
}

// A nil *SummaryWriter (its NewSummaryWriter failed and the error was not
// checked) and a zero SummaryWriter return errors from every method; they
// were nil dereferences, and AddScalars on a zero writer a nil-map write.
func TestNilAndZeroWriter(t *testing.T) {
	img := ember.Zeros(ember.Shape{3, 2, 2})
	for name, s := range map[string]*SummaryWriter{"nil": nil, "zero": {}} {
		if s.Dir() != "" || s.Path() != "" {
			t.Errorf("%s: Dir %q Path %q", name, s.Dir(), s.Path())
		}
		for op, err := range map[string]error{
			"AddScalar":    s.AddScalar("a", 1, 0),
			"AddScalars":   s.AddScalars("a", map[string]float64{"x": 1}, 0),
			"AddHistogram": s.AddHistogram("h", img, 0),
			"AddImage":     s.AddImage("i", img, 0),
			"AddText":      s.AddText("t", "x", 0),
			"Flush":        s.Flush(),
			"Close":        s.Close(),
		} {
			if (err == nil) != (name == "zero" && (op == "Flush" || op == "Close")) {
				t.Errorf("%s writer %s: %v", name, op, err)
			}
		}
	}
}
