#!/usr/bin/env bash
# passlab model: listing, writing each model, --model on other subcommands,
# and clean errors.
# usage: cli_model.sh PASSLAB_BINARY SOURCE_DIR
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$passlab" model --list > "$tmp/list.txt"
for m in resnet18 resnet34 resnet50 resnet101 resnet152 resnet50-inference laplace_pinn gelu mlp mobilenet_v2 transformer_block embedding; do
  grep -q "^$m " "$tmp/list.txt" || fail "model --list lacks $m"
done
"$passlab" model --list --format json > "$tmp/list.json"
grep -q '"name": "laplace_pinn"' "$tmp/list.json" || fail "model --list json"

# Write tiny versions of models and verify / round-trip them through fmt.
"$passlab" model resnet18 --batch 2 --image-size 32 --classes 4 -o "$tmp/r18.hlo"
"$passlab" verify "$tmp/r18.hlo" | grep -q "OK" || fail "resnet18 does not verify"
"$passlab" fmt "$tmp/r18.hlo" > "$tmp/r18b.hlo"
cmp -s "$tmp/r18.hlo" "$tmp/r18b.hlo" || fail "resnet18 text does not round-trip"
grep -q 'batch-norm-grad' "$tmp/r18.hlo" || fail "resnet18 has no batch-norm-grad"
grep -q 'select-and-scatter' "$tmp/r18.hlo" || fail "resnet18 has no select-and-scatter"
"$passlab" model resnet50 --batch 1 --image-size 32 --dtype bf16 --layout nchw --classes 10 > "$tmp/r50.hlo"
"$passlab" verify "$tmp/r50.hlo" | grep -q "OK" || fail "resnet50 bf16 nchw does not verify"
"$passlab" model laplace_pinn --image-size 9 --depth 2 -o "$tmp/pinn.hlo"
"$passlab" verify "$tmp/pinn.hlo" | grep -q "OK" || fail "pinn does not verify"
for m in gelu mlp transformer_block embedding resnet18-inference mobilenet_v2; do
  "$passlab" verify --model "$m" --batch 2 | grep -q "$m: OK" || fail "$m does not verify"
done

# --model on other subcommands: stats, eval with random inputs, opt.
"$passlab" stats --model mlp --batch 4 --format json > "$tmp/stats.json"
grep -q '"dot":' "$tmp/stats.json" || fail "stats --model"
"$passlab" eval --model mlp --batch 2 --image-size 3 --depth 1 --width 4 --classes 3 --random-inputs 1 > "$tmp/eval.txt" \
  || fail "eval --model failed: $(cat "$tmp/eval.txt")"
"$passlab" opt --model gelu --batch 1 --seq-len 2 --width 8 -o "$tmp/opt.hlo" 2> /dev/null
"$passlab" verify "$tmp/opt.hlo" | grep -q OK || fail "opt --model output does not verify"

# Errors: unknown model, option the model does not take, FILE and --model, options without --model.
if "$passlab" model resnet51 2> "$tmp/err"; then fail "unknown model accepted"; fi
grep -q "unknown model 'resnet51'; known models: embedding, gelu" "$tmp/err" || fail "unknown model error: $(cat "$tmp/err")"
if "$passlab" model gelu --layout nchw 2> "$tmp/err"; then fail "bad option accepted"; fi
grep -q "model 'gelu' does not take --layout" "$tmp/err" || fail "option error: $(cat "$tmp/err")"
if "$passlab" verify "$tmp/r18.hlo" --model mlp 2> "$tmp/err"; then fail "FILE and --model accepted"; fi
grep -q "give either FILE or --model" "$tmp/err" || fail "FILE+model error: $(cat "$tmp/err")"
if "$passlab" verify "$tmp/r18.hlo" --batch 3 2> "$tmp/err"; then fail "model options without --model accepted"; fi
grep -q "need --model NAME" "$tmp/err" || fail "options error: $(cat "$tmp/err")"
if "$passlab" model 2> "$tmp/err"; then fail "model without NAME accepted"; fi
# "-o -" is stdout (as FILE "-" is stdin), never a file named "-".
(cd "$tmp" && "$passlab" model mlp -o - > "$tmp/stdout.hlo") || fail "model -o -"
grep -q "^HloModule" "$tmp/stdout.hlo" || fail "model -o - printed no module"
(cd "$tmp" && "$passlab" opt --model mlp --passes dce -o - > "$tmp/opt-stdout.hlo") || fail "opt -o -"
grep -q "^HloModule" "$tmp/opt-stdout.hlo" || fail "opt -o - printed no module"
(cd "$tmp" && "$passlab" fmt "$tmp/stdout.hlo" -o - > /dev/null) || fail "fmt -o -"
[[ ! -e "$tmp/-" ]] || fail "a file named '-' was written"
echo "cli_model: OK"
