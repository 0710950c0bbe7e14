#!/usr/bin/env bash
# sass.<demo>: what the chapters say a kernel compiles to, checked in the demo's own machine code.
#
#   tests/sass_contract.sh [--false] CUOBJDUMP BINARY SPEC
#
# The chapters quote SASS (`STG.E.128`, `MEMBAR.SC.GPU` + `CCTL.IVALL`, `LDGSTS`, ...). A compiler is free to
# emit other code tomorrow, and a chapter that quotes yesterday's would mislead, so each quote lives in a spec
# (tests/sass/<demo>.txt) and this test reads it back from the binary with `cuobjdump -sass`.
#
# Only the memory instructions of a kernel are looked at (loads and stores of every space but the constant
# bank, atomics, reductions, fences, cache controls, mbarrier operations and the TMA's copies), in program
# order; everything else between them is arithmetic and control. A spec line is
#   FUNCTION CHECK OPCODE...
# FUNCTION is an extended regular expression matched against `<source file>:<demangled kernel name>` with the
# spaces removed (e.g. `transpose_tile64_vec4_kernel<`, `litmus_kernel<.*Litmus\)0,.*Order\)4,.*thread_scope\)1>`
# or `^registers_local\.cu:.*array_local_kernel\(`); at least one kernel must match, and the check must hold in
# every kernel that does. OPCODE is a regular
# expression that must match a whole opcode with its modifiers (`LDG\.E\.128.*`); `N*OPCODE` stands for N
# in a row. CHECK is
#   seq     the opcodes appear as consecutive memory instructions, not counting local memory (LDL, STL: the
#           thread's own stack, which no other thread sees; a compiler may spill between two accesses that
#           matter, as the CUDA 12 libcu++ atomic_ref does in weak_ordering)
#   has     each opcode matches some memory instruction, local memory included, in any order
#   lacks   no memory instruction, local memory included, matches any of the opcodes
# `arch sm_XY` on a line of its own picks the code read (default sm_90, the architecture the chapters quote).
# Exit 0 when every line holds, 1 when one does not, 77 (skipped) without cuobjdump and nvdisasm or without
# code for that architecture in the binary. With --false every line must fail instead: the checker's own test
# (tests/sass_false.txt), so that a checker that passes everything cannot go unnoticed.
set -uo pipefail

expect=hold
if [ "${1:-}" = --false ]; then expect=fail; shift; fi
cuobjdump=${1:-} binary=${2:-} spec=${3:-}
[ -n "$binary" ] && [ -f "$spec" ] || { echo "usage: $0 CUOBJDUMP BINARY SPEC" >&2; exit 2; }
[ -f "$binary" ] || { echo "error: $binary not found (build the demo first)"; exit 1; }
if [ -z "$cuobjdump" ] || [ ! -x "$cuobjdump" ]; then
  echo "skipped: cuobjdump not found (a full CUDA toolkit has it; scripts/test.sh installs NVIDIA's wheel)"
  exit 77
fi
tools=$(dirname "$cuobjdump")
if [ -x "$tools/nvdisasm" ]; then
  export NVDISASM_PATH=$tools
elif ! command -v nvdisasm >/dev/null; then
  echo "skipped: nvdisasm not found beside $cuobjdump or on PATH (cuobjdump needs it for -sass)"
  exit 77
fi
command -v c++filt >/dev/null || { echo "skipped: c++filt (binutils) not found"; exit 77; }

arch=$(awk '$1 == "arch" { print $2; exit }' "$spec")
arch=${arch:-sm_90}
elves=$("$cuobjdump" -lelf "$binary" 2>/dev/null)
if ! grep -q "\.$arch\.cubin" <<<"$elves"; then
  echo "skipped: $(basename "$binary") holds no $arch code (CMAKE_CUDA_ARCHITECTURES); the spec quotes $arch"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! "$cuobjdump" -sass -arch "$arch" "$binary" >"$work/sass" 2>"$work/err"; then
  echo "error: cuobjdump -sass failed: $(head -n 1 "$work/err")"
  exit 1
fi

# One line per memory instruction: the source file the kernel was compiled from, a colon and its demangled name
# (spaces removed; two files may hold kernels of the same name in anonymous namespaces), a tab, the opcode; and
# one line with no opcode per kernel, so that a kernel without memory instructions is still found.
awk '
  /^identifier = / { n = split($3, part, "/"); source = part[n]; next }
  /Function : / { name = $NF; print source "\t" name "\t"; next }
  /^[ \t]*\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\*\// {
    if (name == "") next
    line = $0
    sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
    sub(/^@!?U?P[0-9T]+[ \t]+/, "", line)      # predicate
    split(line, word, /[ \t;]/)
    op = word[1]
    if (op ~ /^(LD|ST|MEMBAR|FENCE|CCTL|ATOM|RED|SYNCS|ARRIVES|UBLKCP|UTMA)/ && op !~ /^LDC/) print source "\t" name "\t" op
  }' "$work/sass" | c++filt | awk -F'\t' '{ gsub(/ /, "", $2); print $1 ":" $2 "\t" $3 }' >"$work/ops"

awk -F'\t' -v spec_name="$(basename "$spec")" -v expect="$expect" '
  FNR == NR {
    if (!($1 in count)) { names[++kernels] = $1; count[$1] = 0; shared_count[$1] = 0 }
    if ($2 == "") next
    all_ops[$1, ++count[$1]] = $2
    if ($2 !~ /^(LDL|STL)/) ops[$1, ++shared_count[$1]] = $2  # what other threads can see
    next
  }
  /^[ \t]*(#|$)/ || /^arch[ \t]/ { next }
  {
    n = split($0, f, /[ \t]+/)
    func_re = f[1]; check = f[2]; want = 0
    for (i = 3; i <= n; ++i) {
      re = f[i]; times = 1
      if (re ~ /^[0-9]+\*/) { times = substr(re, 1, index(re, "*") - 1) + 0; re = substr(re, index(re, "*") + 1) }
      for (t = 0; t < times; ++t) pattern[++want] = "^(" re ")$"
    }
    if ((check != "seq" && check != "has" && check != "lacks") || want == 0) {
      printf("%s:%d: bad line (want FUNCTION seq|has|lacks OPCODE...): %s\n", spec_name, FNR, $0); bad = 1; next
    }
    matched = 0; failures = 0; failed = ""
    for (k = 1; k <= kernels; ++k) {
      name = names[k]
      if (name !~ func_re) continue
      ++matched; ok = 0
      if (check == "seq") {
        for (s = 1; s + want - 1 <= shared_count[name] && !ok; ++s) {
          ok = 1
          for (j = 1; j <= want && ok; ++j) if (ops[name, s + j - 1] !~ pattern[j]) ok = 0
        }
      } else if (check == "has") {
        ok = 1
        for (j = 1; j <= want && ok; ++j) {
          found = 0
          for (s = 1; s <= count[name] && !found; ++s) if (all_ops[name, s] ~ pattern[j]) found = 1
          if (!found) ok = 0
        }
      } else {
        ok = 1
        for (s = 1; s <= count[name] && ok; ++s)
          for (j = 1; j <= want; ++j) if (all_ops[name, s] ~ pattern[j]) ok = 0
      }
      if (!ok && ++failures == 1) {  # the first kernel that fails shows what the compiler made of it
        stream = ""
        for (s = 1; s <= count[name]; ++s) stream = stream " " all_ops[name, s]
        failed = sprintf("\n    in %s\n    its memory instructions:%s", name, stream)
      }
    }
    if (failures > 1) failed = failed sprintf("\n    (and %d more of the %d kernels)", failures - 1, matched)
    if (expect == "fail") {
      if (matched > 0 && failures == 0) { printf("FAIL %s: holds, but is false\n", $0); bad = 1 }
      else printf("ok   %s: rejected\n", $0)
    } else if (matched == 0) { printf("FAIL %s: no kernel matches\n", $0); bad = 1 }
    else if (failures > 0) { printf("FAIL %s%s\n", $0, failed); bad = 1 }
    else printf("ok   %s (%d kernel%s)\n", $0, matched, matched == 1 ? "" : "s")
  }
  END { exit bad }
' "$work/ops" "$spec"
