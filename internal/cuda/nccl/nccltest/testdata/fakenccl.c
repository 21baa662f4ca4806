// A stand-in for libnccl.so.2 with NCCL's C ABI (nccl.h, NCCL 2.21), for
// tests on machines without NCCL or a GPU: "device" buffers are host memory
// (as ember's emulated CUDA device gives), streams are ignored, and the
// ranks of a communicator are threads of one process that meet at
// barriers. Collectives compute on the host, with the enum values of the
// real header, so a wrong data type or op code gives wrong numbers.
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum { ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2, ncclInternalError = 3,
               ncclInvalidArgument = 4, ncclInvalidUsage = 5, ncclRemoteError = 6, ncclInProgress = 7 } ncclResult_t;
typedef enum { ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5,
               ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;
typedef void *cudaStream_t;

#define MAXRANKS 8

struct clique {
	ncclUniqueId id;
	int nranks, joined, arrived, generation;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const void *send[MAXRANKS];
	struct clique *next;
};

typedef struct ncclComm {
	struct clique *c;
	int rank;
} *ncclComm_t;

static pthread_mutex_t reg = PTHREAD_MUTEX_INITIALIZER;
static struct clique *cliques;
static int idSeq;
static __thread char lastError[256];

// barrier waits for every rank of the clique; after 20 s without them it
// fails (a peer that gave up), so a broken test fails instead of hanging.
static int barrier(struct clique *c) {
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 20;
	int ok = 1;
	pthread_mutex_lock(&c->mu);
	int gen = c->generation;
	if (++c->arrived == c->nranks) {
		c->arrived = 0;
		c->generation++;
		pthread_cond_broadcast(&c->cv);
	} else {
		while (gen == c->generation && ok) ok = pthread_cond_timedwait(&c->cv, &c->mu, &deadline) == 0;
		if (gen != c->generation) ok = 1;
	}
	pthread_mutex_unlock(&c->mu);
	if (!ok) strcpy(lastError, "a peer did not arrive within 20 s");
	return ok;
}

#define MEET(c) \
	if (!barrier(c)) return ncclRemoteError

ncclResult_t ncclGetVersion(int *version) { *version = 22105; return ncclSuccess; }

// ncclGetUniqueId fills all 128 bytes, so that a truncated or shifted id
// passed to ncclCommInitRank is caught.
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
	pthread_mutex_lock(&reg);
	int seq = ++idSeq;
	pthread_mutex_unlock(&reg);
	for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) id->internal[i] = (char)(i * 7 + seq * 31 + 1);
	return ncclSuccess;
}

static int validID(const ncclUniqueId *id) {
	for (int s = 1; s <= idSeq; s++) {
		int ok = 1;
		for (int i = 0; i < NCCL_UNIQUE_ID_BYTES && ok; i++) ok = id->internal[i] == (char)(i * 7 + s * 31 + 1);
		if (ok) return 1;
	}
	return 0;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
	if (nranks < 1 || nranks > MAXRANKS || rank < 0 || rank >= nranks) {
		strcpy(lastError, "bad rank or nranks");
		return ncclInvalidArgument;
	}
	pthread_mutex_lock(&reg);
	if (!validID(&commId)) {
		pthread_mutex_unlock(&reg);
		strcpy(lastError, "unknown unique id");
		return ncclInvalidArgument;
	}
	struct clique *c = cliques;
	while (c && memcmp(&c->id, &commId, sizeof commId) != 0) c = c->next;
	if (!c) {
		c = calloc(1, sizeof *c);
		c->id = commId;
		c->nranks = nranks;
		pthread_mutex_init(&c->mu, NULL);
		pthread_cond_init(&c->cv, NULL);
		c->next = cliques;
		cliques = c;
	}
	pthread_mutex_unlock(&reg);
	if (c->nranks != nranks) {
		strcpy(lastError, "nranks differs between ranks");
		return ncclInvalidUsage;
	}
	struct ncclComm *m = calloc(1, sizeof *m);
	m->c = c;
	m->rank = rank;
	if (!barrier(c)) { free(m); return ncclRemoteError; }
	*comm = m;
	return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) { free(comm); return ncclSuccess; }
ncclResult_t ncclCommAbort(ncclComm_t comm) { free(comm); return ncclSuccess; }
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) { *asyncError = ncclSuccess; return ncclSuccess; }
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) { *count = comm->c->nranks; return ncclSuccess; }
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) { *rank = comm->rank; return ncclSuccess; }

static __thread int groupDepth;
ncclResult_t ncclGroupStart(void) { groupDepth++; return ncclSuccess; }
ncclResult_t ncclGroupEnd(void) {
	if (groupDepth == 0) { strcpy(lastError, "ncclGroupEnd without ncclGroupStart"); return ncclInvalidUsage; }
	groupDepth--;
	return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r) {
	switch (r) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}

const char *ncclGetLastError(ncclComm_t comm) { return lastError; }

static size_t typeSize(ncclDataType_t t) {
	switch (t) {
	case ncclInt8: case ncclUint8: return 1;
	case ncclFloat16: case ncclBfloat16: return 2;
	case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
	case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
	}
	return 0;
}

#define REDUCE(T)                                                                         \
	{                                                                                     \
		T *d = (T *)dst;                                                                  \
		for (size_t i = 0; i < n; i++) {                                                  \
			T acc = ((const T *)src[0])[off + i];                                         \
			for (int r = 1; r < nranks; r++) {                                            \
				T v = ((const T *)src[r])[off + i];                                       \
				switch (op) {                                                             \
				case ncclSum: case ncclAvg: acc += v; break;                              \
				case ncclProd: acc *= v; break;                                           \
				case ncclMax: acc = v > acc ? v : acc; break;                             \
				case ncclMin: acc = v < acc ? v : acc; break;                             \
				}                                                                         \
			}                                                                             \
			if (op == ncclAvg) acc /= (T)nranks;                                          \
			d[i] = acc;                                                                   \
		}                                                                                 \
	}

// reduce combines element off..off+n of every rank's send buffer into dst.
static ncclResult_t reduce(void *dst, const void **src, int nranks, size_t off, size_t n, ncclDataType_t t, ncclRedOp_t op) {
	if (op < ncclSum || op > ncclAvg) { strcpy(lastError, "bad op"); return ncclInvalidArgument; }
	switch (t) {
	case ncclInt32: REDUCE(int32_t) break;
	case ncclInt64: REDUCE(int64_t) break;
	case ncclFloat32: REDUCE(float) break;
	case ncclFloat64: REDUCE(double) break;
	default: strcpy(lastError, "data type not supported by the fake"); return ncclInvalidArgument;
	}
	return ncclSuccess;
}

// Every collective: publish the send buffer, meet, compute into a private
// buffer, meet again (then nobody reads any more), write the result.
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
	struct clique *c = comm->c;
	size_t es = typeSize(datatype);
	if (!es) { strcpy(lastError, "bad data type"); return ncclInvalidArgument; }
	c->send[comm->rank] = sendbuff;
	MEET(c);
	void *tmp = malloc(count * es + 1);
	ncclResult_t r = reduce(tmp, c->send, c->nranks, 0, count, datatype, op);
	if (!barrier(c)) { free(tmp); return ncclRemoteError; }
	if (r == ncclSuccess) memcpy(recvbuff, tmp, count * es);
	free(tmp);
	return r;
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
	struct clique *c = comm->c;
	size_t es = typeSize(datatype);
	if (!es || root < 0 || root >= c->nranks) { strcpy(lastError, "bad data type or root"); return ncclInvalidArgument; }
	c->send[comm->rank] = sendbuff;
	MEET(c);
	void *tmp = malloc(count * es + 1);
	memcpy(tmp, c->send[root], count * es);
	if (!barrier(c)) { free(tmp); return ncclRemoteError; }
	memcpy(recvbuff, tmp, count * es);
	free(tmp);
	return ncclSuccess;
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
	struct clique *c = comm->c;
	size_t es = typeSize(datatype);
	if (!es || root < 0 || root >= c->nranks) { strcpy(lastError, "bad data type or root"); return ncclInvalidArgument; }
	c->send[comm->rank] = sendbuff;
	MEET(c);
	void *tmp = malloc(count * es + 1);
	ncclResult_t r = ncclSuccess;
	if (comm->rank == root) r = reduce(tmp, c->send, c->nranks, 0, count, datatype, op);
	if (!barrier(c)) { free(tmp); return ncclRemoteError; }
	if (r == ncclSuccess && comm->rank == root) memcpy(recvbuff, tmp, count * es);
	free(tmp);
	return r;
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
	struct clique *c = comm->c;
	size_t es = typeSize(datatype), b = sendcount * es;
	if (!es) { strcpy(lastError, "bad data type"); return ncclInvalidArgument; }
	c->send[comm->rank] = sendbuff;
	MEET(c);
	char *tmp = malloc(b * c->nranks + 1);
	for (int r = 0; r < c->nranks; r++) memcpy(tmp + r * b, c->send[r], b);
	if (!barrier(c)) { free(tmp); return ncclRemoteError; }
	memcpy(recvbuff, tmp, b * c->nranks);
	free(tmp);
	return ncclSuccess;
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
	struct clique *c = comm->c;
	size_t es = typeSize(datatype);
	if (!es) { strcpy(lastError, "bad data type"); return ncclInvalidArgument; }
	c->send[comm->rank] = sendbuff;
	MEET(c);
	void *tmp = malloc(recvcount * es + 1);
	ncclResult_t r = reduce(tmp, c->send, c->nranks, comm->rank * recvcount, recvcount, datatype, op);
	if (!barrier(c)) { free(tmp); return ncclRemoteError; }
	if (r == ncclSuccess) memcpy(recvbuff, tmp, recvcount * es);
	free(tmp);
	return r;
}
