#!/usr/bin/env bash
# passlab opt --emit-ptx: every kernel of the optimized module through the
# GPU code generator (no GPU needed); ptxas accepts the PTX when installed.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat > "$tmp/m.hlo" <<'HLO'
HloModule m
ENTRY e {
  a = f32[64,256] parameter(0)
  t = f32[64,256] tanh(a)
  z = f32[] constant(0)
  s = f32[64] reduce(t, z), dimensions={1}, to_apply={ x = f32[] parameter(0) y = f32[] parameter(1) ROOT r = f32[] add(x, y) }
  tr = f32[256,64] transpose(a), dimensions={1,0}
  ROOT o = (f32[64], f32[256,64]) tuple(s, tr)
}
HLO
"$passlab" opt "$tmp/m.hlo" --emit-ptx "$tmp/ptx" -o "$tmp/opt.hlo" 2> "$tmp/err" || fail "emit-ptx: $(cat "$tmp/err")"
grep -q "PTX of .* kernels" "$tmp/err" || fail "no summary: $(cat "$tmp/err")"
head -1 "$tmp/ptx/index.tsv" | grep -q "^instruction	entry	emitter	grid	block	buffers$" || fail "index header: $(cat "$tmp/ptx/index.tsv")"
[ "$(tail -n +2 "$tmp/ptx/index.tsv" | wc -l)" -ge 1 ] || fail "no kernels in index"
grep -q "	reduction	" "$tmp/ptx/index.tsv" || fail "no reduction kernel: $(cat "$tmp/ptx/index.tsv")"
while IFS=$'\t' read -r name entry emitter grid block buffers; do
  [ "$name" = instruction ] && continue
  f="$tmp/ptx/$entry.ptx"
  [ -s "$f" ] || fail "missing $f"
  grep -q "^.visible .entry $entry(" "$f" || fail "no entry $entry in $f"
  if [ -x /usr/local/cuda/bin/ptxas ]; then
    /usr/local/cuda/bin/ptxas -arch=sm_90 "$f" -o "$tmp/k.cubin" 2> "$tmp/ptxas" || fail "ptxas rejects $entry: $(cat "$tmp/ptxas")"
  fi
done < "$tmp/ptx/index.tsv"
if "$passlab" opt "$tmp/m.hlo" --emit-ptx "$tmp/ptx2" --emitter-disable convert-gpu-to-nvvm -o "$tmp/o2.hlo" 2> "$tmp/e1"; then
  fail "a required emitter pass was disabled"
fi
grep -q "required" "$tmp/e1" || fail "required pass message: $(cat "$tmp/e1")"
echo "cli_emit_ptx: ok"
