#!/usr/bin/env bash
# compare.sh runs `ember bench` and bench/torch_bench.py (PyTorch on the CPU)
# with the same cases and thread count, joins their JSON and prints a markdown
# table: case, ember time, PyTorch time, ratio (PyTorch time / ember time:
# above 1 means ember is faster), and each side's GFLOP/s or GB/s.
#
#   bench/compare.sh [--quick] [--threads N] [--cases a,b] [--repeat R] [--isa avx2] [--out DIR]
#
# --threads defaults to nproc. --repeat R runs the two sides R times in
# turn (ember, PyTorch, ember, ...) and keeps each case's best median on
# each side: on a shared host whose speed drifts over minutes, one pass
# can catch either side in a slow spell. The JSON files are kept in --out (default: a
# temporary directory, named on stderr). PyTorch runs with OPENBLAS_CORETYPE
# and OPENBLAS_L2_SIZE unset (in its command only): when set, they slow its
# GEMM about 1.7x. TORCH_BLAS_DIR, when set, is put first on PyTorch's
# LD_LIBRARY_PATH (a directory holding another libblas.so.3, say OpenBLAS's).
# EMBER_BIN, when set, is the ember binary to run instead of building
# ./cmd/ember. --isa avx2 runs both sides as on a CPU without AVX-512 (an
# AVX2-only Zen 3, say) on this one: ember with GODEBUG switching off the
# AVX-512 features (golang.org/x/sys/cpu honours it), PyTorch with
# OPENBLAS_CORETYPE=Haswell, ONEDNN_MAX_CPU_ISA=AVX2 and
# ATEN_CPU_CAPABILITY=avx2. The caches and clocks stay this CPU's.
set -euo pipefail
cd "$(dirname "$0")/.."

threads=$(nproc)
quick=()
cases=()
repeat=1
isa=""
out=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--quick) quick=(--quick) ;;
	--threads) threads=$2; shift ;;
	--threads=*) threads=${1#*=} ;;
	--cases) cases=(--cases "$2"); shift ;;
	--cases=*) cases=(--cases "${1#*=}") ;;
	--out) out=$2; shift ;;
	--out=*) out=${1#*=} ;;
	--repeat) repeat=$2; shift ;;
	--repeat=*) repeat=${1#*=} ;;
	--isa) isa=$2; shift ;;
	--isa=*) isa=${1#*=} ;;
	-h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
[[ -n $out ]] || out=$(mktemp -d /tmp/ember-compare.XXXXXX)
mkdir -p "$out"

ember=${EMBER_BIN:-}
if [[ -z $ember ]]; then
	ember=$out/ember
	go build -o "$ember" ./cmd/ember
fi
torch_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
ember_env=(env)
case $isa in
"") ;;
avx2)
	ember_env+=("GODEBUG=${GODEBUG:+$GODEBUG,}cpu.avx512f=off,cpu.avx512bw=off,cpu.avx512vl=off,cpu.avx512dq=off,cpu.avx512cd=off")
	torch_env+=(OPENBLAS_CORETYPE=Haswell ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2)
	;;
*) echo "compare.sh: --isa takes avx2" >&2; exit 2 ;;
esac
if [[ -n ${TORCH_BLAS_DIR:-} ]]; then
	torch_env+=("LD_LIBRARY_PATH=$TORCH_BLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi
for ((r = 1; r <= repeat; r++)); do
	echo "ember bench (threads $threads, pass $r/$repeat) ..." >&2
	"${ember_env[@]}" "$ember" bench --json --threads "$threads" "${quick[@]}" "${cases[@]}" >"$out/ember.$r.json"
	echo "torch_bench.py (threads $threads, pass $r/$repeat) ..." >&2
	"${torch_env[@]}" /usr/bin/python3 bench/torch_bench.py --threads "$threads" "${quick[@]}" "${cases[@]}" >"$out/torch.$r.json"
done
# each side's best pass per case (the one pass as it is when --repeat is 1)
for side in ember torch; do
	/usr/bin/python3 - "$out/$side.json" "$out/$side".*.json <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[2:]]
best = {}
for run in runs:
    for r in run["results"]:
        b = best.get(r["name"])
        if b is None or (r.get("seconds") and (not b.get("seconds") or r["seconds"] < b["seconds"])):
            best[r["name"]] = r
out = runs[0]
out["results"] = [best[r["name"]] for r in out["results"]]
out["passes"] = len(runs)
json.dump(out, open(sys.argv[1], "w"), indent=2)
PY
done
echo "JSON: $out/ember.json $out/torch.json" >&2

join='
def dur: if . == null then "n/a"
	elif . < 1e-3 then "\((. * 1e7 | round) / 10)µs"
	elif . < 1 then "\((. * 1e5 | round) / 100)ms"
	else "\((. * 1e3 | round) / 1000)s" end;
def unit: if . == "B" then "GB/s" else "GFLOP/s" end;
def ok: (.seconds // 0) > 0;
def rate: if ok then "\((.rate * 100 | round) / 100) \(.unit | unit)" else "n/a" end;
($t[0].results | map({key: .name, value: .}) | from_entries) as $tm
| "| case | ember | PyTorch | ratio (PyTorch/ember) | ember rate | PyTorch rate | note |",
  "|---|---:|---:|---:|---:|---:|---|",
  ($e[0].results[] | . as $r | ($tm[$r.name] // {}) as $p
   | [ $r.name,
       (if $r | ok then $r.seconds | dur else "n/a" end),
       (if $p | ok then $p.seconds | dur else "n/a" end),
       (if ($r | ok) and ($p | ok) then "\(($p.seconds / $r.seconds * 100 | round) / 100)" else "n/a" end),
       ($r | rate),
       ($p | rate),
       ([($r.missing // empty | "ember: \(.)"), ($p.missing // empty | "PyTorch: \(.)"),
         (if $p == {} then "no PyTorch case" else empty end)] | join("; "))
     ] | "| " + join(" | ") + " |")
'
if command -v jq >/dev/null; then
	jq -rn --slurpfile e "$out/ember.json" --slurpfile t "$out/torch.json" "$join"
else
	/usr/bin/python3 - "$out/ember.json" "$out/torch.json" <<'PY'
import json, sys
e, t = (json.load(open(p)) for p in sys.argv[1:3])
tm = {r["name"]: r for r in t["results"]}
def dur(s):
    if not s: return "n/a"
    return f"{s*1e6:.1f}µs" if s < 1e-3 else f"{s*1e3:.2f}ms" if s < 1 else f"{s:.3f}s"
def rate(r):
    return f"{r['rate']:.2f} {'GB/s' if r['unit'] == 'B' else 'GFLOP/s'}" if r.get("seconds") else "n/a"
print("| case | ember | PyTorch | ratio (PyTorch/ember) | ember rate | PyTorch rate | note |")
print("|---|---:|---:|---:|---:|---:|---|")
for r in e["results"]:
    p = tm.get(r["name"], {})
    ratio = f"{p['seconds']/r['seconds']:.2f}" if r.get("seconds") and p.get("seconds") else "n/a"
    note = [f"ember: {r['missing']}"] if "missing" in r else []
    note += [f"PyTorch: {p['missing']}"] if "missing" in p else []
    note += [] if p else ["no PyTorch case"]
    note = "; ".join(note)
    print(f"| {r['name']} | {dur(r.get('seconds'))} | {dur(p.get('seconds'))} | {ratio} | {rate(r)} | {rate(p)} | {note} |")
PY
fi
