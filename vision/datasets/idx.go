package datasets

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxIDXBytes caps the data an IDX file may declare (1 GiB).
const MaxIDXBytes = 1 << 30

// IDX is a parsed IDX file of unsigned bytes (type 0x08).
type IDX struct {
	Dims []int
	Data []byte
}

// IDXError reports a malformed IDX file.
type IDXError struct {
	Path string
	Msg  string
}

func (e *IDXError) Error() string {
	if e.Path == "" {
		return "idx: " + e.Msg
	}
	return "idx: " + e.Path + ": " + e.Msg
}

// ParseIDX reads an IDX file of unsigned bytes, gzip-compressed or not. The
// data is read incrementally, so a header declaring more data than the
// stream holds costs no more memory than the stream.
func ParseIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReader(r)
	if m, err := br.Peek(2); err == nil && m[0] == 0x1f && m[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &IDXError{Msg: "bad gzip stream: " + err.Error()}
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, &IDXError{Msg: "short header: " + err.Error()}
	}
	if hdr[0] != 0 || hdr[1] != 0 {
		return nil, &IDXError{Msg: fmt.Sprintf("bad magic %02x%02x", hdr[0], hdr[1])}
	}
	if hdr[2] != 0x08 {
		return nil, &IDXError{Msg: fmt.Sprintf("element type 0x%02x is not unsigned byte (0x08)", hdr[2])}
	}
	nd := int(hdr[3])
	if nd == 0 || nd > 8 {
		return nil, &IDXError{Msg: fmt.Sprintf("%d dimensions, want 1 to 8", nd)}
	}
	dims := make([]int, nd)
	total := int64(1)
	for i := range dims {
		var d uint32
		if err := binary.Read(br, binary.BigEndian, &d); err != nil {
			return nil, &IDXError{Msg: "short header: " + err.Error()}
		}
		dims[i] = int(d)
		total *= int64(d)
		if total > MaxIDXBytes {
			return nil, &IDXError{Msg: fmt.Sprintf("dimensions %v exceed %d bytes", dims[:i+1], MaxIDXBytes)}
		}
	}
	data, err := readN(br, total)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, &IDXError{Msg: fmt.Sprintf("dimensions %v need %d bytes, file has %d", dims, total, len(data))}
		}
		return nil, &IDXError{Msg: err.Error()}
	}
	// Read to the end: gzip.Reader verifies the CRC-32 and size in the
	// trailer only at EOF, and bytes past the data are no IDX file.
	var one [1]byte
	switch n, err := br.Read(one[:]); {
	case n > 0:
		return nil, &IDXError{Msg: fmt.Sprintf("data past the %d bytes that dimensions %v declare", total, dims)}
	case err == io.EOF:
	case err != nil:
		return nil, &IDXError{Msg: err.Error()}
	default:
		if _, err := io.ReadFull(br, one[:]); err != io.EOF {
			return nil, &IDXError{Msg: fmt.Sprintf("data past the %d bytes that dimensions %v declare", total, dims)}
		}
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// exactBytes is the largest declared size allocated at once, before the
// stream has shown it holds that much.
const exactBytes = 64 << 20

// readN reads n bytes from r into a slice of exactly n bytes. Up to
// exactBytes it is allocated at once; beyond, the data is read in chunks
// of that size and joined, so a header that lies costs no more than the
// stream holds, and the peak is twice the data, not a growing buffer's 4×.
func readN(r io.Reader, n int64) ([]byte, error) {
	if n <= exactBytes {
		b := make([]byte, n)
		k, err := io.ReadFull(r, b)
		return b[:k], err
	}
	var chunks [][]byte
	var got int64
	for got < n {
		c := make([]byte, min(n-got, exactBytes))
		k, err := io.ReadFull(r, c)
		got += int64(k)
		chunks = append(chunks, c[:k])
		if err != nil {
			return make([]byte, got), err
		}
	}
	out := make([]byte, 0, n)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil
	}
	return out, nil
}

// ReadIDX parses the IDX file at path.
func ReadIDX(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := ParseIDX(f)
	if e, ok := err.(*IDXError); ok {
		e.Path = path
	}
	return x, err
}
