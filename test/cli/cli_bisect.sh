#!/usr/bin/env bash
# passlab bisect finds the pass run after which a user check starts failing.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat > "$tmp/m.hlo" <<'HLO'
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n1 = f32[4] negate(p)
  n2 = f32[4] negate(n1)
  t = (f32[4], f32[4]) tuple(n2, p)
  g = f32[4] get-tuple-element(t), index=0
  ROOT e = f32[4] exponential(g)
}
HLO
# "Good" while the module still has a negate: algsimp's -(-A) => A breaks it.
printf '#!/bin/sh\ngrep -q "negate(" "$1"\n' > "$tmp/check.sh"; chmod +x "$tmp/check.sh"
"$passlab" bisect "$tmp/m.hlo" --check "$tmp/check.sh" > "$tmp/out" || fail "bisect failed: $(cat "$tmp/out")"
grep -q "first bad pass run: #[0-9]* algsimp (@[0-9]* in gpu/optimization/simplification" "$tmp/out" || fail "wrong culprit: $(cat "$tmp/out")"
grep -q "^-  %n2 = " "$tmp/out" || grep -q "^-.*negate" "$tmp/out" || fail "no diff of the culprit: $(cat "$tmp/out")"
# The built-in evaluator check finds nothing wrong with a correct pipeline.
"$passlab" bisect "$tmp/m.hlo" | grep -q "nothing to bisect" || fail "evaluator check flagged a correct pipeline"
echo "cli_bisect: OK"
