package tensorboard

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/emberml/ember/tensorboard/tbpb"
	"google.golang.org/protobuf/proto"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is the CRC-32C (Castagnoli) checksum of b.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// MaskedCRC32C is TFRecord's masked CRC: the CRC-32C rotated right by 15
// bits plus 0xa282ead8.
func MaskedCRC32C(b []byte) uint32 {
	c := CRC32C(b)
	return (c>>15 | c<<17) + 0xa282ead8
}

// writeRecord frames data as a TFRecord: length (uint64 LE), its masked
// CRC, the data, its masked CRC.
func writeRecord(w io.Writer, data []byte) error {
	var hdr [12]byte
	binary.LittleEndian.PutUint64(hdr[:8], uint64(len(data)))
	binary.LittleEndian.PutUint32(hdr[8:], MaskedCRC32C(hdr[:8]))
	var foot [4]byte
	binary.LittleEndian.PutUint32(foot[:], MaskedCRC32C(data))
	for _, b := range [][]byte{hdr[:], data, foot[:]} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// RecordError is a TFRecord stream that is cut short or whose CRC does not
// match.
type RecordError struct {
	Offset int64
	Reason string
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("tensorboard: record at byte %d: %s", e.Offset, e.Reason)
}

// MaxRecord bounds one record ReadRecords accepts (256 MiB). Its memory
// is also bounded by the stream's size: a record's data is read as it
// comes, not allocated from its header's length.
const MaxRecord = 256 << 20

// ReadRecords reads a TFRecord stream, checking both CRCs of every record.
func ReadRecords(r io.Reader) ([][]byte, error) {
	br := bufio.NewReader(r)
	var out [][]byte
	off := int64(0)
	for {
		var hdr [12]byte
		n, err := io.ReadFull(br, hdr[:])
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, &RecordError{off, fmt.Sprintf("header cut short after %d bytes", n)}
		}
		if got, want := binary.LittleEndian.Uint32(hdr[8:]), MaskedCRC32C(hdr[:8]); got != want {
			return out, &RecordError{off, fmt.Sprintf("length CRC %#08x, want %#08x", got, want)}
		}
		l := binary.LittleEndian.Uint64(hdr[:8])
		if l > MaxRecord {
			return out, &RecordError{off, fmt.Sprintf("length %d over %d", l, MaxRecord)}
		}
		// read what is there rather than allocate what the header claims:
		// a 16-byte file claiming MaxRecord costs no 256 MiB
		data, err := io.ReadAll(io.LimitReader(br, int64(l)+4))
		if err != nil || uint64(len(data)) != l+4 {
			return out, &RecordError{off, "data cut short"}
		}
		if got, want := binary.LittleEndian.Uint32(data[l:]), MaskedCRC32C(data[:l]); got != want {
			return out, &RecordError{off, fmt.Sprintf("data CRC %#08x, want %#08x", got, want)}
		}
		out = append(out, data[:l])
		off += 16 + int64(l)
	}
}

// ReadEvents reads an event file: every record's CRCs checked, every
// record decoded as an Event.
func ReadEvents(path string) ([]*tbpb.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := ReadRecords(f)
	var evs []*tbpb.Event
	for i, r := range recs {
		e := &tbpb.Event{}
		if uerr := proto.Unmarshal(r, e); uerr != nil {
			return evs, errors.Join(fmt.Errorf("tensorboard: %s: record %d: %w", path, i, uerr), err)
		}
		evs = append(evs, e)
	}
	if err != nil {
		return evs, fmt.Errorf("%s: %w", path, err)
	}
	return evs, nil
}
