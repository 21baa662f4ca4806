#!/usr/bin/env bash
# gpu-check.sh builds a self-contained bundle for checking ember on a GPU
# machine that has the NVIDIA driver (and PyTorch) but no Go.
#
#   scripts/gpu-check.sh [--build-only] [--run] [--out DIR] [--from-head]
#
#   --build-only  (the default) build the bundle and stop
#   --run         build, then run the bundle's run.sh here
#   --out DIR     the bundle folder (default ./gpu-check-bundle); it is replaced
#   --from-head   build a clean export of the committed HEAD (git archive),
#                 not the working tree with its uncommitted edits
#
# The bundle holds, built with CGO_ENABLED=0 -trimpath for linux/$GOARCH:
#   bin/*.test.gz     go test -c binaries: the root package (the conformance
#                     suite on every cuda:i), backend/cuda, backend/cuda/kernels,
#                     internal/cuda/*, nn, dist, examples/walkthrough, and
#                     backend/cpu/internal/gemm (the CPU's GEMM, convolution and
#                     dot-product kernels: on an AVX-512 host it runs the AVX-512
#                     assembly that a machine without AVX-512 cannot)
#   bin/ember.gz      the CLI (ember info, smi, train --ddp, launch)
#   bin/walkthrough.gz the tutorials walkthrough, and its --bench mode
#   src.tar.gz        the package folders the tests run in, with testdata/
#                     (run.sh unpacks it into src/)
#   bench.py          the PyTorch side of the benchmark
#   run.sh            unpacks bin/ (gzip) on its first run, runs everything and prints one summary
#
# Then, on the GPU machine:  bash gpu-check-bundle/run.sh
set -uo pipefail

mode=build
out=./gpu-check-bundle
from_head=0
while [ $# -gt 0 ]; do
	case "$1" in
	--build-only) mode=build ;;
	--run) mode=run ;;
	--out) out="$2"; shift ;;
	--out=*) out="${1#--out=}" ;;
	--from-head) from_head=1 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpu-check.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
	esac
	shift
done

# write_run_sh writes the bundle's run.sh (bash; it needs no Go).
write_run_sh() {
	cat >"$out/run.sh" <<'RUN_SH'
#!/usr/bin/env bash
# run.sh checks ember on this machine from the bundle scripts/gpu-check.sh
# built (no Go needed): ember info and smi, the test binaries (the root
# package runs the conformance suite on every cuda:i present), the
# walkthrough at full size, MatMul / x*x timed on ember and PyTorch, and
# several GPUs: DataParallel, and DDP over NCCL launched by ember launch.
# It prints one summary: PASS, FAIL or SKIP (with the reason) per step.
#
#   bash run.sh
#
# Settings (environment): SIZE (x*x side, 10000), MATMUL (4096), REPS (10),
# PYTHON (the python with torch; default: the first of python3,
# /usr/bin/python3 that imports torch), TEST_TIMEOUT (30m a test binary),
# EMBER_REQUIRE_LIBS=1 (make tests that would skip for a missing library fail).
# Logs go to logs/ next to this script. Exit status 1 when a step failed.
set -u
B=$(cd "$(dirname "$0")" && pwd)
L=$B/logs
mkdir -p "$L"
SIZE=${SIZE:-10000} MATMUL=${MATMUL:-4096} REPS=${REPS:-10} TEST_TIMEOUT=${TEST_TIMEOUT:-30m}
export EMBER_FIXTURES_DIR="$B/src/testdata/fixtures"
export EMBER_CACHE_DIR="${EMBER_CACHE_DIR:-$B/kernel-cache}"
to() { if command -v timeout >/dev/null; then timeout "$@"; else shift; "$@"; fi; }

names=() stats=() secs=() notes=()
record() { names+=("$1"); stats+=("$2"); secs+=("$3"); notes+=("$4"); printf '%-28s %-4s %7ss  %s\n' "$1" "$2" "$3" "$4"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
failtail() { echo "---- last lines of $1 ----"; tail -n 25 "$1"; echo "----"; }

# The binaries travel gzipped; unpack them once.
for z in "$B"/bin/*.gz; do
	[ -e "$z" ] || continue
	f=${z%.gz}
	if [ ! -x "$f" ] || [ "$z" -nt "$f" ]; then
		gzip -dc "$z" >"$f.tmp" && chmod +x "$f.tmp" && mv "$f.tmp" "$f" || { echo "run.sh: cannot unpack $z" >&2; exit 1; }
	fi
done

# So do the package folders with their testdata (JSON fixtures shrink 4x).
if [ -e "$B/src.tar.gz" ] && { [ ! -d "$B/src" ] || [ "$B/src.tar.gz" -nt "$B/src" ]; }; then
	rm -rf "$B/src" && tar -C "$B" -xzf "$B/src.tar.gz" && touch "$B/src" || { echo "run.sh: cannot unpack src.tar.gz" >&2; exit 1; }
fi

cat "$B/BUILD.txt" 2>/dev/null
echo "host:    $(uname -n) $(uname -m); $(nproc 2>/dev/null) cores"
echo

# Is cuda:0 usable? The walkthrough's --bench with nothing to time only checks.
gpu=0 why="bin/walkthrough missing"
if [ -x "$B/bin/walkthrough" ]; then
	if why=$("$B/bin/walkthrough" --bench --device cuda:0 --matmul 0 --size 0 2>&1); then
		gpu=1 why=""
	else
		why=${why#walkthrough --bench: }
	fi
fi
[ $gpu = 1 ] && echo "cuda:0 is usable" || echo "no usable GPU: $why"
echo

# 1. ember info, ember smi
if [ -x "$B/bin/ember" ]; then
	t=$(now)
	if "$B/bin/ember" info --verbose >"$L/info.log" 2>&1; then
		record "ember info" PASS "$(since "$t")" "$(grep -m1 '^ember will use' "$L/info.log")"
	else
		record "ember info" FAIL "$(since "$t")" "see logs/info.log"; failtail "$L/info.log"
	fi
	cat "$L/info.log"; echo
	t=$(now)
	if "$B/bin/ember" smi >"$L/smi.log" 2>&1; then
		record "ember smi" PASS "$(since "$t")" ""
		cat "$L/smi.log"; echo
	elif [ $gpu = 0 ]; then
		record "ember smi" SKIP "$(since "$t")" "$(tail -n 1 "$L/smi.log")"
	else
		record "ember smi" FAIL "$(since "$t")" "$(tail -n 1 "$L/smi.log")"
	fi
else
	record "ember info" FAIL 0 "bin/ember was not built (see BUILD.txt)"
	record "ember smi" FAIL 0 "bin/ember was not built (see BUILD.txt)"
fi

# 2. the test binaries, each in its package folder (tests open testdata/... there)
while read -r name dir; do
	[ -n "$name" ] || continue
	log="$L/test-$name.log" t=$(now)
	(cd "$B/src/$dir" && to 3600 "$B/bin/$name.test" -test.v -test.timeout "$TEST_TIMEOUT") >"$log" 2>&1
	rc=$?
	np=$(grep -c -- '--- PASS' "$log") ns=$(grep -c -- '--- SKIP' "$log") nf=$(grep -c -- '--- FAIL' "$log")
	note="$np passed, $ns skipped"
	# A test may log one "summary: ..." line worth showing (gemm: the kernel sets run).
	sum=$(grep -m1 -o 'summary: .*' "$log" | cut -c10-)
	[ -n "$sum" ] && note="$note; $sum"
	nc=$(grep -c -- '--- SKIP: .*cuda' "$log")
	if [ "$nc" -gt 0 ]; then
		if [ $gpu = 0 ]; then
			note="$note; SKIP $nc cuda test(s): no usable GPU"
		else
			note="$note; $nc cuda test(s) skipped with a GPU present: $(grep -- '--- SKIP: .*cuda' "$log" | head -n 3 | sed 's/.*SKIP: //; s/ (.*//' | paste -sd ' ' -)"
		fi
	fi
	if [ $rc = 0 ]; then
		record "test $dir" PASS "$(since "$t")" "$note"
	else
		record "test $dir" FAIL "$(since "$t")" "exit $rc, $nf failed, $note; see logs/test-$name.log"
		grep -- '--- FAIL' "$log" | head -n 20
		failtail "$log"
	fi
done <"$B/tests.txt"

# 3. the walkthrough at full size
if [ -x "$B/bin/walkthrough" ]; then
	t=$(now)
	if to 1800 "$B/bin/walkthrough" --size "$SIZE" >"$L/walkthrough.log" 2>&1; then
		n=$(grep -c '^SKIP ' "$L/walkthrough.log")
		timing=$(grep -E '^(CPU|GPU) x\*x: best|^speed-up' "$L/walkthrough.log" | sed 's/ over .*//' | paste -sd ';' -)
		record "walkthrough --size $SIZE" PASS "$(since "$t")" "$n GPU parts skipped; $timing"
	else
		record "walkthrough --size $SIZE" FAIL "$(since "$t")" "see logs/walkthrough.log"; failtail "$L/walkthrough.log"
	fi
else
	record "walkthrough --size $SIZE" FAIL 0 "bin/walkthrough was not built (see BUILD.txt)"
fi

# 4. the benchmark: ember, then PyTorch
if [ $gpu = 0 ]; then
	record "bench ember" SKIP 0 "no usable GPU: $why"
	record "bench torch" SKIP 0 "no usable GPU: $why"
else
	t=$(now)
	if to 900 "$B/bin/walkthrough" --bench --device cuda:0 --matmul "$MATMUL" --size "$SIZE" --reps "$REPS" >"$L/bench-ember.log" 2>&1; then
		record "bench ember" PASS "$(since "$t")" "$(grep -c '^BENCH' "$L/bench-ember.log") timings"
	else
		record "bench ember" FAIL "$(since "$t")" "see logs/bench-ember.log"; failtail "$L/bench-ember.log"
	fi
	py=${PYTHON:-}
	if [ -z "$py" ]; then
		for c in python3 /usr/bin/python3 python; do
			command -v "$c" >/dev/null && "$c" -c 'import torch' 2>/dev/null && { py=$c; break; }
		done
	fi
	t=$(now)
	if [ -z "$py" ]; then
		record "bench torch" SKIP 0 "no python with torch (set PYTHON)"
	else
		to 900 "$py" "$B/bench.py" --device cuda:0 --matmul "$MATMUL" --size "$SIZE" --reps "$REPS" >"$L/bench-torch.log" 2>&1
		rc=$?
		if [ $rc = 0 ]; then
			record "bench torch" PASS "$(since "$t")" "$(grep -m1 '^INFO' "$L/bench-torch.log" | cut -c6-)"
		elif [ $rc = 3 ]; then
			record "bench torch" SKIP "$(since "$t")" "$(grep -m1 '^SKIP' "$L/bench-torch.log" | cut -c6-)"
		else
			record "bench torch" FAIL "$(since "$t")" "see logs/bench-torch.log"; failtail "$L/bench-torch.log"
		fi
	fi
fi

# 5. several GPUs: DataParallel over every GPU (nn's TestDataParallelGPUs),
# and DistributedDataParallel over NCCL, one process per GPU (ember train
# --ddp --nproc-per-node gpu, i.e. ember launch, on the synthetic dataset),
# timed against one GPU. With one GPU, DDP runs as a single NCCL rank.
if [ $gpu = 0 ]; then
	record "multi-GPU DataParallel" SKIP 0 "no usable GPU: $why"
	record "multi-GPU DDP nccl" SKIP 0 "no usable GPU: $why"
elif [ ! -x "$B/bin/ember" ]; then
	record "multi-GPU DataParallel" FAIL 0 "bin/ember was not built (see BUILD.txt)"
	record "multi-GPU DDP nccl" FAIL 0 "bin/ember was not built (see BUILD.txt)"
else
	ngpu=$("$B/bin/ember" info --json 2>/dev/null | grep -o '"device_count": *[0-9]*' | head -n 1 | tr -dc '0-9')
	ngpu=${ngpu:-0}
	t=$(now)
	if [ "$ngpu" -lt 2 ]; then
		record "multi-GPU DataParallel" SKIP 0 "$ngpu GPU(s): needs 2"
	elif [ ! -x "$B/bin/nn.test" ]; then
		record "multi-GPU DataParallel" FAIL 0 "bin/nn.test was not built (see BUILD.txt)"
	elif (cd "$B/src/nn" && to 1800 "$B/bin/nn.test" -test.run '^TestDataParallelGPUs$' -test.v) >"$L/multigpu-dp.log" 2>&1 &&
		grep -q -- '--- PASS: TestDataParallelGPUs' "$L/multigpu-dp.log"; then
		record "multi-GPU DataParallel" PASS "$(since "$t")" "SimpleCNN over $ngpu GPUs matches one device (outputs, gradients)"
	else
		record "multi-GPU DataParallel" FAIL "$(since "$t")" "see logs/multigpu-dp.log"; failtail "$L/multigpu-dp.log"
	fi
	# metric COLUMN FILE: a column of the last row of an ember train metrics.csv
	metric() { tail -n 1 "$2" 2>/dev/null | awk -F, -v c="$1" '{print $c}'; }
	train=(train --dataset synthetic --epochs 1 --batch 64 --quiet)
	t=$(now)
	rm -rf "$B/runs"
	to 900 "$B/bin/ember" "${train[@]}" --device cuda:0 --out "$B/runs/one" >"$L/multigpu-one.log" 2>&1
	one=$(metric 7 "$B/runs/one/metrics.csv")
	t=$(now)
	n=$((ngpu > 0 ? ngpu : 1))
	to 900 "$B/bin/ember" "${train[@]}" --ddp --nproc-per-node "$n" --device cuda --out "$B/runs/ddp" >"$L/multigpu-ddp.log" 2>&1
	rc=$?
	acc=$(metric 5 "$B/runs/ddp/metrics.csv") rate=$(metric 7 "$B/runs/ddp/metrics.csv")
	note="$n rank(s), test acc ${acc:-?}: ${rate:-?} samples/s (one GPU without DDP: ${one:-?})"
	if [ $rc = 0 ] && awk -v a="${acc:-0}" 'BEGIN{exit !(a >= 0.5)}'; then
		record "multi-GPU DDP nccl" PASS "$(since "$t")" "$note"
	elif grep -qiE 'libnccl[^ ]* (was )?not found|cannot (open|load) libnccl' "$L/multigpu-ddp.log"; then
		record "multi-GPU DDP nccl" SKIP "$(since "$t")" "no NCCL library: $(grep -m1 -i 'libnccl' "$L/multigpu-ddp.log" | cut -c1-160)"
	else
		record "multi-GPU DDP nccl" FAIL "$(since "$t")" "exit $rc, $note; see logs/multigpu-ddp.log"; failtail "$L/multigpu-ddp.log"
	fi
fi

# The summary.
echo
echo "================ gpu-check summary ================"
fails=0
for i in "${!names[@]}"; do
	printf '%-28s %-4s %7ss  %s\n' "${names[$i]}" "${stats[$i]}" "${secs[$i]}" "${notes[$i]}"
	[ "${stats[$i]}" = FAIL ] && fails=$((fails + 1))
done
if cat "$L"/bench-*.log 2>/dev/null | grep -q '^BENCH'; then
	echo
	echo "benchmark (best of $REPS after a warm-up; ms, and the rate):"
	cat "$L"/bench-*.log | grep '^BENCH' | awk '
		{ lib=$2; op=$3 " " $4 "²"; for (i=6; i<=NF; i++) { split($i, kv, "="); v[lib, op, kv[1]] = kv[2] }
		  rate[lib, op] = $NF; ops[op] = 1; libs[lib] = 1 }
		END {
			printf "  %-14s %14s %22s %14s %22s %16s\n", "op", "ember ms", "ember rate", "torch ms", "torch rate", "t_torch/t_ember"
			for (op in ops) {
				e = v["ember", op, "best_ms"]; t = v["torch", op, "best_ms"]
				r = (e != "" && t != "") ? sprintf("%.2f", t / e) : "-"
				printf "  %-14s %14s %22s %14s %22s %16s\n", op, (e == "" ? "-" : e), rate["ember", op], (t == "" ? "-" : t), rate["torch", op], r
			}
		}'
fi
echo
if [ $fails = 0 ]; then echo "gpu-check: all steps passed or skipped"; else echo "gpu-check: $fails step(s) FAILED (logs in $L)"; fi
[ $fails = 0 ]
RUN_SH
}

# write_bench_py writes the PyTorch half of the benchmark.
write_bench_py() {
	cat >"$out/bench.py" <<'BENCH_PY'
"""The PyTorch side of gpu-check's benchmark: MatMul and x*x timed as ember's
walkthrough --bench does (one warm-up, torch.cuda.synchronize before each
clock read), printing lines in the same format:

  BENCH torch matmul 4096 cuda:0 best_ms=... mean_ms=... reps=... tflops=...
  BENCH torch mul 10000 cuda:0 best_ms=... mean_ms=... reps=... gbps=...

Exits 3 after a "SKIP torch: reason" line when torch or CUDA is missing.
"""
import argparse
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda:0")
p.add_argument("--matmul", type=int, default=4096)
p.add_argument("--size", type=int, default=10000)
p.add_argument("--reps", type=int, default=10)
a = p.parse_args()

try:
    import torch
except Exception as e:  # noqa: BLE001 - any import failure means no torch
    print(f"SKIP torch: cannot import torch: {e}")
    sys.exit(3)
if not torch.cuda.is_available():
    print(f"SKIP torch: torch.cuda.is_available() is False (torch {torch.__version__}, CUDA build {torch.version.cuda})")
    sys.exit(3)

dev = torch.device(a.device)
print(f"INFO torch {torch.__version__} CUDA {torch.version.cuda} on {torch.cuda.get_device_name(dev)}; "
      f"matmul allow_tf32={torch.backends.cuda.matmul.allow_tf32}")


def timeit(f):
    f()  # warm-up: cuBLAS handle, kernel selection, caching allocator
    torch.cuda.synchronize(dev)
    times = []
    for _ in range(a.reps):
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize(dev)
        times.append(time.perf_counter() - t0)
    return min(times), sum(times) / len(times)


with torch.no_grad():
    if a.matmul > 0:
        x = torch.randn(a.matmul, a.matmul, device=dev)
        y = torch.randn(a.matmul, a.matmul, device=dev)
        best, mean = timeit(lambda: x @ y)
        n = float(a.matmul)
        print(f"BENCH torch matmul {a.matmul} {dev} best_ms={best*1e3:.4f} mean_ms={mean*1e3:.4f} "
              f"reps={a.reps} tflops={2*n**3/best/1e12:.2f}")
        del x, y
    if a.size > 0:
        x = torch.randn(a.size, a.size, device=dev)
        best, mean = timeit(lambda: x * x)
        n = float(a.size)
        print(f"BENCH torch mul {a.size} {dev} best_ms={best*1e3:.4f} mean_ms={mean*1e3:.4f} "
              f"reps={a.reps} gbps={12*n*n/best/1e9:.1f}")
BENCH_PY
}

root=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null || { echo "gpu-check.sh: go is not on PATH (build the bundle where Go is, then copy it)" >&2; exit 1; }

# Refuse to delete a folder that is not an earlier bundle.
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ] && [ ! -f "$out/run.sh" ]; then
	echo "gpu-check.sh: $out exists and is not a gpu-check bundle; not replacing it" >&2
	exit 1
fi
rm -rf "$out"
mkdir -p "$out/bin" "$out/src" "$out/logs"
out=$(cd "$out" && pwd)

src=$root
if [ "$from_head" = 1 ]; then
	src=$(mktemp -d)
	trap 'rm -rf "$src"' EXIT
	git -C "$root" archive HEAD | tar -x -C "$src" || { echo "gpu-check.sh: git archive HEAD failed" >&2; exit 1; }
fi

export CGO_ENABLED=0 GOOS=linux GOARCH="${GOARCH:-amd64}"
flags=(-trimpath -ldflags=-s\ -w)
failures=()

# Test packages: binary name, package folder (relative to the module root).
pkgs=(ember:. backend_cuda:backend/cuda backend_cuda_kernels:backend/cuda/kernels)
for d in "$src"/internal/cuda/*/; do
	d=${d%/}
	rel=${d#"$src"/}
	ls "$d"/*_test.go >/dev/null 2>&1 && pkgs+=("${rel//\//_}:$rel")
done
[ -d "$src/nn" ] && pkgs+=(nn:nn)
[ -d "$src/dist" ] && pkgs+=(dist:dist)
# the transformer models (their tests run on every device present: parity on a real GPU)
for d in models/gpt2 models/llama; do [ -d "$src/$d" ] && pkgs+=("${d//\//_}:$d"); done
pkgs+=(examples_walkthrough:examples/walkthrough backend_cpu_internal_gemm:backend/cpu/internal/gemm)

: >"$out/tests.txt"
cd "$src" || exit 1
for entry in "${pkgs[@]}"; do
	name=${entry%%:*} dir=${entry#*:}
	echo "build  $dir (test binary bin/$name.test)"
	if go test -c "${flags[@]}" -o "$out/bin/$name.test" "./$dir" 2>"$out/logs/build-$name.log"; then
		echo "$name $dir" >>"$out/tests.txt"
		mkdir -p "$out/src/$dir"
		# A package's own testdata (read relative to its folder).
		[ -d "$dir/testdata" ] && [ "$dir" != . ] && cp -r "$dir/testdata" "$out/src/$dir/"
	else
		failures+=("$dir: $(tail -3 "$out/logs/build-$name.log" | tr '\n' ' ')")
		echo "  FAILED: $(tail -3 "$out/logs/build-$name.log")"
	fi
done
for entry in ember:cmd/ember walkthrough:examples/walkthrough; do
	name=${entry%%:*} dir=${entry#*:}
	echo "build  $dir (bin/$name)"
	if ! go build "${flags[@]}" -o "$out/bin/$name" "./$dir" 2>"$out/logs/build-$name-bin.log"; then
		failures+=("$dir: $(tail -3 "$out/logs/build-$name-bin.log" | tr '\n' ' ')")
		echo "  FAILED: $(tail -3 "$out/logs/build-$name-bin.log")"
	fi
done

# The root testdata: embertest's fixtures (found through EMBER_FIXTURES_DIR,
# which run.sh sets) and the files tests open as testdata/... or ../testdata/...
cp -r testdata "$out/src/testdata"
find "$out/src/testdata" -name '__pycache__' -prune -exec rm -rf {} +
write_run_sh
write_bench_py
chmod +x "$out/run.sh"

{
	echo "built:   $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
	echo "go:      $(go version)"
	echo "commit:  $(git -C "$root" rev-parse --short HEAD 2>/dev/null)$([ "$from_head" = 1 ] && echo ' (clean HEAD)' || { git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' + working-tree edits'; })"
	echo "target:  $GOOS/$GOARCH, CGO_ENABLED=0, -trimpath"
	for f in "${failures[@]}"; do echo "BUILD FAILED: $f"; done
} >"$out/BUILD.txt"

# Go binaries halve under gzip, the fixtures shrink 4x; run.sh unpacks
# them on its first run.
gzip -9 "$out"/bin/*
tar -C "$out" -czf "$out/src.tar.gz" src && rm -rf "$out/src"
size=$(du -sm "$out" | cut -f1)
echo
cat "$out/BUILD.txt"
echo "bundle:  $out (${size} MiB)"
if [ "$size" -ge 60 ]; then
	echo "gpu-check.sh: the bundle is ${size} MiB, over the 60 MiB budget" >&2
	exit 1
fi
echo "on the GPU machine: bash $(basename "$out")/run.sh"

if [ "$mode" = run ]; then
	echo
	bash "$out/run.sh"
	exit $?
fi
[ ${#failures[@]} -eq 0 ]
