package nccl

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/emberml/ember/internal/cuda/libpath"
	"github.com/emberml/ember/internal/cuda/nccl/nccltest"
)

// reset forgets the library opened, so a test can open another.
func reset() { lib.Reset() }

// TestNotFound: without NCCL, loading fails with an error naming
// libnccl.so.2 and every folder searched.
func TestNotFound(t *testing.T) {
	reset()
	t.Setenv("EMBER_CUDA_LIB_DIR", t.TempDir())
	err := Load()
	if err == nil {
		p, _ := Library()
		t.Skipf("a real NCCL is installed here (%s)", p)
	}
	var nf *libpath.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Load() = %v, want a *libpath.NotFoundError", err)
	}
	msg := err.Error()
	for _, want := range []string{"nccl:", "libnccl.so.2 not found", "searched:", nf.Searched[0]} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if _, err := Version(); err == nil {
		t.Error("Version() without NCCL succeeded")
	}
}

// TestHeaderValues pins the enum values and the id size to nccl.h. Checked
// against src/nccl.h.in of NVIDIA/nccl at tag v2.21.5-1 (what PyTorch 2.5's
// wheels ship); the declarations of every function in Symbols and these
// enums are identical at v2.18.1-1 and v2.30.7-1:
//
//	ncclResult_t ncclGetVersion(int *version);
//	ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId);
//	ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
//	ncclResult_t ncclCommDestroy(ncclComm_t comm);
//	ncclResult_t ncclCommAbort(ncclComm_t comm);
//	ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError);
//	ncclResult_t ncclCommCount(const ncclComm_t comm, int* count);
//	ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank);
//	ncclResult_t ncclGroupStart(); ncclResult_t ncclGroupEnd();
//	ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
//	    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
//	ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
//	    ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
//	ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
//	    ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
//	ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
//	    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
//	ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
//	    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
//	const char* ncclGetErrorString(ncclResult_t result);
//	const char* ncclGetLastError(ncclComm_t comm);
//	typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId; // 128
//
// The enums are C ints (32 bits): ncclRedOp_t is sized by a dummy enum to
// stay an int. Sizes and counts are size_t, ranks and roots int.
func TestHeaderValues(t *testing.T) {
	if unsafe.Sizeof(UniqueID{}) != 128 || UniqueIDBytes != 128 {
		t.Errorf("ncclUniqueId is 128 bytes, UniqueID is %d", unsafe.Sizeof(UniqueID{}))
	}
	results := map[Result]int32{Success: 0, UnhandledCudaError: 1, SystemError: 2, InternalError: 3, InvalidArgument: 4, InvalidUsage: 5, RemoteError: 6, InProgress: 7}
	for r, v := range results {
		if int32(r) != v {
			t.Errorf("%s = %d, nccl.h says %d", r.Name(), r, v)
		}
	}
	types := map[DataType]int32{Int8: 0, Uint8: 1, Int32: 2, Uint32: 3, Int64: 4, Uint64: 5, Float16: 6, Float32: 7, Float64: 8, Bfloat16: 9}
	for d, v := range types {
		if int32(d) != v {
			t.Errorf("data type %d, nccl.h says %d", d, v)
		}
	}
	ops := map[RedOp]int32{Sum: 0, Prod: 1, Max: 2, Min: 3, Avg: 4}
	for o, v := range ops {
		if int32(o) != v {
			t.Errorf("op %d, nccl.h says %d", o, v)
		}
	}
	for code, want := range map[int]string{2708: "2.7.8", 22105: "2.21.5", 23007: "2.30.7"} {
		if got := VersionString(code); got != want {
			t.Errorf("VersionString(%d) = %s, want %s", code, got, want)
		}
	}
}

// TestStandIn calls every bound function of a stand-in library with
// NCCL's ABI (nccltest): the 128-byte id passed by value arrives intact,
// arguments land in their places (a wrong data type, op or count would give
// wrong numbers), and errors carry NCCL's strings.
func TestStandIn(t *testing.T) {
	nccltest.Build(t)
	reset()
	t.Cleanup(reset)
	v, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	if v != 22105 {
		t.Fatalf("Version() = %d, want the stand-in's 22105", v)
	}
	id, err := GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	bad := id
	bad.Internal[127] ^= 1
	_, err = CommInitRank(1, bad, 0)
	var e *Error
	if !errors.As(err, &e) || e.Code != InvalidArgument || e.Call != "ncclCommInitRank" || !strings.Contains(err.Error(), "invalid argument") || !strings.Contains(err.Error(), "unknown unique id") {
		t.Fatalf("CommInitRank with a corrupted id = %v; want ncclInvalidArgument with NCCL's strings", err)
	}
	if s, _ := ErrorString(RemoteError); !strings.Contains(s, "remote process exited") {
		t.Errorf("ErrorString(RemoteError) = %q", s)
	}
	if err := GroupEnd(); err == nil || !strings.Contains(err.Error(), "ncclInvalidUsage") {
		t.Errorf("GroupEnd without GroupStart = %v", err)
	}
	if err := Group(func() error { return nil }); err != nil {
		t.Fatal(err)
	}

	// Two ranks, as two goroutines of this process.
	const world, n = 2, 5
	var pin runtime.Pinner
	defer pin.Unpin()
	addr := func(p unsafe.Pointer) uint64 { pin.Pin(p); return uint64(uintptr(p)) }
	var wg sync.WaitGroup
	errs := make([]error, world)
	results := make([][]float32, world)
	gathered := make([][]int64, world)
	scattered := make([][]float64, world)
	bcast := make([][]int32, world)
	reduced := make([][]int32, world)
	for r := 0; r < world; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = func() error {
				c, err := CommInitRank(world, id, r)
				if err != nil {
					return err
				}
				defer c.Destroy()
				if cnt, err := c.Count(); err != nil || cnt != world {
					return errors.New("Count")
				}
				if ur, err := c.UserRank(); err != nil || ur != r {
					return errors.New("UserRank")
				}
				if ae, err := c.AsyncError(); err != nil || ae != Success {
					return errors.New("AsyncError")
				}
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(i + 10*r)
				}
				if err := c.AllReduce(addr(unsafe.Pointer(&x[0])), addr(unsafe.Pointer(&x[0])), n, Float32, Max, 0); err != nil {
					return err
				}
				results[r] = x
				in := []int64{int64(r) + 1, -int64(r)}
				out := make([]int64, 2*world)
				if err := c.AllGather(addr(unsafe.Pointer(&in[0])), addr(unsafe.Pointer(&out[0])), 2, Int64, 0); err != nil {
					return err
				}
				gathered[r] = out
				send := make([]float64, 2*world)
				for i := range send {
					send[i] = float64(i) + 0.5*float64(r)
				}
				recv := make([]float64, 2)
				if err := c.ReduceScatter(addr(unsafe.Pointer(&send[0])), addr(unsafe.Pointer(&recv[0])), 2, Float64, Avg, 0); err != nil {
					return err
				}
				scattered[r] = recv
				b := []int32{int32(100 * (r + 1)), 7}
				if err := c.Broadcast(addr(unsafe.Pointer(&b[0])), addr(unsafe.Pointer(&b[0])), 2, Int32, 1, 0); err != nil {
					return err
				}
				bcast[r] = b
				// A grouped pair of reduces, one to each root (Group keeps
				// the goroutine on one thread: NCCL's group is per thread,
				// and calling GroupStart and GroupEnd from whichever threads
				// the goroutine ran on failed now and then).
				red := make([]int32, world)
				if err := Group(func() error {
					for root := 0; root < world; root++ {
						src := []int32{int32(r + root), int32(r * root)}
						pin.Pin(&src[0])
						var dst uint64
						if root == r {
							dst = addr(unsafe.Pointer(&red[0]))
						}
						if err := c.Reduce(uint64(uintptr(unsafe.Pointer(&src[0]))), dst, 2, Int32, Sum, root, 0); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					return err
				}
				reduced[r] = red
				return nil
			}()
		}()
	}
	wg.Wait()
	for r := 0; r < world; r++ {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		// max(i, i+10) = i+10; rank 1's block of the gather is {2, -1};
		// rank r's slice of the mean of send is i + 0.25 for i in 2r, 2r+1.
		for i, v := range results[r] {
			if v != float32(i+10) {
				t.Errorf("rank %d all_reduce max = %v", r, results[r])
				break
			}
		}
		if g := gathered[r]; g[0] != 1 || g[1] != 0 || g[2] != 2 || g[3] != -1 {
			t.Errorf("rank %d all_gather = %v, want [1 0 2 -1]", r, g)
		}
		if s := scattered[r]; s[0] != float64(2*r)+0.25 || s[1] != float64(2*r+1)+0.25 {
			t.Errorf("rank %d reduce_scatter avg = %v", r, s)
		}
		// Σ_q (q + r), Σ_q q·r over q = 0, 1.
		if red := reduced[r]; red[0] != int32(1+2*r) || red[1] != int32(r) {
			t.Errorf("rank %d reduce to itself = %v, want [%d %d]", r, red, 1+2*r, r)
		}
		if b := bcast[r]; b[0] != 200 || b[1] != 7 {
			t.Errorf("rank %d broadcast from 1 = %v, want [200 7]", r, b)
		}
	}
	var destroyed Comm
	if err := destroyed.Destroy(); err != nil {
		t.Errorf("Destroy of a zero Comm = %v, want a no-op", err)
	}
	if _, err := destroyed.Count(); err == nil {
		t.Error("Count on a zero Comm succeeded")
	}
}
