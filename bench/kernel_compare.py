#!/usr/bin/env python3
"""passlab's kernels of one step beside XLA's, by kind and by name.

Reads passlab's Chrome trace of a step (`passlab run --device cuda --trace
FILE`: one event per device kernel, the device function in args.detail) and
the kernel list bench/jax_resnet_step.py writes with --kernels (CSV: name,
calls and microseconds per step), sorts every device function into a kind by
its name (convolution, gemm, layout change, fused or emitted kernels), and
prints time and count per kind for both, then the longest kernels of each. The kinds are read from names only, so a cuDNN
kernel that XLA and passlab both call lands in the same row.

Usage: bench/kernel_compare.py PASSLAB_TRACE.json[.gz] XLA_KERNELS.csv [--top N]
"""
import argparse
import csv
import gzip
import json
import re
import sys
from collections import defaultdict

FUSED = "other (fused / emitted)"
KINDS = [
    # Layout changes first: cuDNN's own transposes have "conv" nowhere.
    ("layout", re.compile(r"nchwToNhwc|nhwcToNchw|transpose|nchw.*nhwc|nhwc.*nchw", re.I)),
    # XLA's fusions are named by their kind and hero (loop_convert_fusion,
    # input_reduce_fusion, gemm_fusion_dot...): only gemm fusions are gemms.
    ("gemm", re.compile(r"gemm_fusion|triton_gemm", re.I)),
    (FUSED, re.compile(r"fusion", re.I)),
    ("convolution", re.compile(r"conv|fprop|dgrad|wgrad|winograd|implicit|precomp|cudnn|fft2d|flip_filter", re.I)),
    ("gemm", re.compile(r"gemm|cutlass|cublas|sgemm|sm\d+_xmma|nvjet|splitK|gemv", re.I)),
]


def kind_of(name):
    for kind, pattern in KINDS:
        if pattern.search(name):
            return kind
    return FUSED


def passlab_kernels(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernels = defaultdict(lambda: [0, 0.0])
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        if cat in ("copy", "memset") or cat.startswith("transfer"):
            continue
        args = e.get("args", {})
        detail = args.get("detail", "")
        if detail.startswith("host:"):
            name = "[host] " + e.get("name", "")
        else:
            name = detail or e.get("name", "")
        # Emitted kernels are named by their HLO instruction: keep the fusion's
        # kind from the name passlab gives (fusion.12 -> fusion).
        if cat == "kernel":
            name = "[emitted] " + re.sub(r"[._]\d+$", "", e.get("name", ""))
        k = kernels[name]
        k[0] += 1
        k[1] += float(e.get("dur", 0))
    return kernels


def xla_kernels(path):
    kernels = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            kernels[row["name"]] = [float(row["calls_per_step"]), float(row["us_per_step"])]
    return kernels


def by_kind(kernels, emitted_as_other=True):
    out = defaultdict(lambda: [0.0, 0.0])
    for name, (calls, us) in kernels.items():
        kind = FUSED if name.startswith("[emitted]") and emitted_as_other else kind_of(name)
        if name.startswith("[host]"):
            kind = "host fallback"
        out[kind][0] += calls
        out[kind][1] += us
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("passlab_trace")
    ap.add_argument("xla_kernels")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    p = passlab_kernels(args.passlab_trace)
    x = xla_kernels(args.xla_kernels)
    pk, xk = by_kind(p), by_kind(x)
    kinds = sorted(set(pk) | set(xk), key=lambda k: -(pk.get(k, [0, 0])[1] + xk.get(k, [0, 0])[1]))
    print(f"{'kind':26} {'passlab ms':>11} {'kernels':>8} {'XLA ms':>9} {'kernels':>8} {'ratio':>7}")
    tp = tx = 0.0
    for k in kinds:
        pc, pu = pk.get(k, [0, 0.0])
        xc, xu = xk.get(k, [0, 0.0])
        tp += pu
        tx += xu
        ratio = f"{pu / xu:.2f}x" if xu > 0 else "-"
        print(f"{k:26} {pu / 1e3:11.3f} {pc:8.0f} {xu / 1e3:9.3f} {xc:8.1f} {ratio:>7}")
    print(f"{'total':26} {tp / 1e3:11.3f} {'':8} {tx / 1e3:9.3f} {'':8} {tp / tx if tx else 0:6.2f}x")
    for title, kernels in (("passlab", p), ("XLA", x)):
        print(f"\n{title}: the {args.top} longest kernels per step")
        for name, (calls, us) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:args.top]:
            print(f"  {us / 1e3:8.3f} ms {calls:6.1f}x  {kind_of(name)[:12]:12}  {name[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
