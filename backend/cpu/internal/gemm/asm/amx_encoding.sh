#!/bin/sh
# Assembles every AMX instruction that kernels_amd64.s emits as bytes (the
# lines "// AMX: <instruction>", Intel syntax) with GNU as, and writes
# testdata/amx_encoding.txt: "<instruction>\t<bytes in hex>" per line.
# TestAMXEncoding compares the bytes in kernels_amd64.s with that file.
# Needs binutils ≥ 2.36 (AMX). Run from this directory after go generate.
set -eu
src=../kernels_amd64.s
out=../testdata/amx_encoding.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n 's|^[[:space:]]*// AMX: ||p' "$src" | sort -u >"$tmp/list"
{
	echo "# made by asm/amx_encoding.sh with $(as --version | head -1)"
	while IFS= read -r ins; do
		printf '.intel_syntax noprefix\n%s\n' "$ins" >"$tmp/a.s"
		as --64 -o "$tmp/a.o" "$tmp/a.s"
		hex=$(objdump -d "$tmp/a.o" | sed -n 's/^ *0:\t\([0-9a-f ]*\)\t.*/\1/p' | tr -d ' ')
		[ -n "$hex" ] || { echo "amx_encoding.sh: no bytes for $ins" >&2; exit 1; }
		printf '%s\t%s\n' "$ins" "$hex"
	done <"$tmp/list"
} >"$out"
