package weights

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
)

// The default bound of one load: LoadRatio times the file's size, at most
// DefaultLoadMax bytes.
const (
	LoadRatio      = 16
	DefaultLoadMax = 16 << 30
)

// tensorOverhead is what each tensor of a file is charged against the load
// limit beyond its data: the Tensor, its storage and the map entry.
const tensorOverhead = 768

// MaxTensors bounds the tensors of one file (a 90 MB safetensors header
// can name 1.5 million empty tensors, 1.2 GB of bookkeeping).
const MaxTensors = 1 << 18

// minLoad is the bound of a small file's load (16 × its size when that is more).
const minLoad = 16 << 20

var loadLimit atomic.Int64

func init() {
	if v, err := strconv.ParseInt(os.Getenv("EMBER_LOAD_LIMIT_MB"), 10, 64); err == nil && v > 0 {
		loadLimit.Store(v << 20)
	}
}

// SetLoadLimit sets how many bytes one load (LoadPyTorch, ParsePyTorch,
// LoadSafetensors, ParseSafetensors) may materialise: the tensors' data
// after widening, inflated records and the pickle, counted once per shared
// storage, plus a fixed overhead per tensor. By default (n == 0) the bound
// is LoadRatio (16) times the file's size (at least 16 MiB), at most
// DefaultLoadMax (16 GiB),
// which every ordinary checkpoint fits: torch.save stores records
// uncompressed and widening (uint8 to int32) is at most 4×. n > 0 makes
// the bound n bytes whatever the file's size; use it for files deflated
// more than that. EMBER_LOAD_LIMIT_MB sets it in megabytes at start-up.
// It returns the previous setting.
func SetLoadLimit(n int64) int64 { return loadLimit.Swap(max(n, 0)) }

// budget counts the bytes a load has materialised against its bound.
type budget struct {
	left, limit int64
	tensors     int
	fileSize    int64
	explicit    bool
}

func newBudget(fileSize int64) *budget {
	if n := loadLimit.Load(); n > 0 {
		return &budget{left: n, limit: n, fileSize: fileSize, explicit: true}
	}
	n := int64(DefaultLoadMax)
	if fileSize < n/LoadRatio {
		n = max(LoadRatio*fileSize, minLoad)
	}
	return &budget{left: n, limit: n, fileSize: fileSize}
}

// tensor counts one tensor against MaxTensors and tensorOverhead bytes.
func (b *budget) tensor() error {
	if b.tensors++; b.tensors > MaxTensors {
		return fmt.Errorf("more than %d tensors in one file", MaxTensors)
	}
	return b.charge(tensorOverhead, "a tensor")
}

// charge takes n bytes for what, or reports that the bound is reached.
func (b *budget) charge(n int64, what string) error {
	if n < 0 || n > b.left {
		how := fmt.Sprintf("%d bytes (%d× the %d-byte file, at least %d, at most %d; weights.SetLoadLimit or EMBER_LOAD_LIMIT_MB raises it)", b.limit, LoadRatio, b.fileSize, minLoad, int64(DefaultLoadMax))
		if b.explicit {
			how = fmt.Sprintf("%d bytes (weights.SetLoadLimit)", b.limit)
		}
		return fmt.Errorf("%s needs %d more bytes: the load would exceed its limit of %s", what, n, how)
	}
	b.left -= n
	return nil
}
