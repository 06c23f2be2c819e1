#!/usr/bin/env python3
"""The ResNet training step that `passlab run --model resnetN` builds, in JAX.

Same model as models/resnet.cc: NHWC, convolutions without bias, batch norm in
training mode (batch statistics, running statistics updated with momentum
0.1), ReLU, 3x3/2 max pool, basic or bottleneck blocks, global average pool,
dense head, softmax cross-entropy on soft labels, SGD with momentum 0.9,
weight decay 1e-4 and learning rate 0.1. f32 throughout, and matrix products
and convolutions at "highest" precision (no TF32), as passlab's cuBLASLt and
cuDNN calls compute.

Prints the median wall time of a step (synchronised after every step) and,
when the profiler writes a Perfetto trace, the GPU kernel time of a step (the
sum of kernel durations, and the envelope from the first kernel's start to the
last one's end), the numbers `passlab run --device cuda` reports from CUPTI.
With --json FILE the numbers are also written there.

Needs JAX with a GPU; it is the reference for passlab's GPU numbers and is not
part of the build.
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import sys
import tempfile
import time

BLOCKS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}


def architecture(depth, width):
    """The convolutions in build order: (name, k, cin, cout, stride, relu) and block structure."""
    bottleneck = depth >= 50
    expansion = 4 if bottleneck else 1
    stem = ("stem", 7, 3, width, 2)
    blocks = []
    channels = width
    for layer in range(4):
        w = width << layer
        for block in range(BLOCKS[depth][layer]):
            stride = 2 if (layer > 0 and block == 0) else 1
            out = w * expansion
            prefix = f"layer{layer + 1}.block{block}"
            down = (f"{prefix}.downsample", 1, channels, out, stride) if (stride != 1 or channels != out) else None
            if bottleneck:
                convs = [(f"{prefix}.conv1", 1, channels, w, 1, True),
                         (f"{prefix}.conv2", 3, w, w, stride, True),
                         (f"{prefix}.conv3", 1, w, out, 1, False)]
            else:
                convs = [(f"{prefix}.conv1", 3, channels, w, stride, True),
                         (f"{prefix}.conv2", 3, w, w, 1, False)]
            blocks.append((down, convs))
            channels = out
    return stem, blocks, channels


def make_step(depth, width, batch, image_size, classes):
    """The training step and its arguments: (step, (params, moms, stats, images, labels)).

    step(params, moms, stats, images, labels) -> (loss, params, moms, stats).
    Used by main() and by bench/xla_ablation.py.
    """
    import jax
    import jax.numpy as jnp
    from jax import lax

    stem, blocks, channels = architecture(depth, width)
    eps, bn_momentum = 1e-5, 0.1
    lr, momentum, weight_decay = 0.1, 0.9, 1e-4

    def init(key):
        params, stats = {}, {}

        def conv(name, k, cin, cout):
            nonlocal key
            key, sub = jax.random.split(key)
            params[name + ".weight"] = jax.random.normal(sub, (k, k, cin, cout), jnp.float32) * (2.0 / (k * k * cin)) ** 0.5
            params[name + ".bn.scale"] = jnp.ones((cout,), jnp.float32)
            params[name + ".bn.offset"] = jnp.zeros((cout,), jnp.float32)
            stats[name + ".bn.running_mean"] = jnp.zeros((cout,), jnp.float32)
            stats[name + ".bn.running_var"] = jnp.ones((cout,), jnp.float32)

        conv(stem[0], stem[1], stem[2], stem[3])
        for down, convs in blocks:
            if down:
                conv(down[0], down[1], down[2], down[3])
            for name, k, cin, cout, _, _ in convs:
                conv(name, k, cin, cout)
        key, sub = jax.random.split(key)
        params["fc.weight"] = jax.random.normal(sub, (channels, classes), jnp.float32) * (1.0 / channels) ** 0.5
        params["fc.bias"] = jnp.zeros((classes,), jnp.float32)
        return params, stats

    def conv_bn(params, stats, new_stats, x, name, k, stride, relu):
        pad = k // 2
        y = lax.conv_general_dilated(x, params[name + ".weight"], (stride, stride), [(pad, pad), (pad, pad)],
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        mean = jnp.mean(y, axis=(0, 1, 2))
        var = jnp.mean(jnp.square(y - mean), axis=(0, 1, 2))
        y = (y - mean) * lax.rsqrt(var + eps) * params[name + ".bn.scale"] + params[name + ".bn.offset"]
        m, v = name + ".bn.running_mean", name + ".bn.running_var"
        new_stats[m] = stats[m] * (1 - bn_momentum) + lax.stop_gradient(mean) * bn_momentum
        new_stats[v] = stats[v] * (1 - bn_momentum) + lax.stop_gradient(var) * bn_momentum
        return jnp.maximum(y, 0) if relu else y

    def loss_fn(params, stats, images, labels):
        new_stats = {}
        x = conv_bn(params, stats, new_stats, images, stem[0], stem[1], stem[4], True)
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), [(0, 0), (1, 1), (1, 1), (0, 0)])
        for down, convs in blocks:
            shortcut = x
            if down:
                shortcut = conv_bn(params, stats, new_stats, x, down[0], down[1], down[4], False)
            y = x
            for name, k, _, _, stride, relu in convs:
                y = conv_bn(params, stats, new_stats, y, name, k, stride, relu)
            x = jnp.maximum(y + shortcut, 0)
        pooled = jnp.mean(x, axis=(1, 2))
        logits = pooled @ params["fc.weight"] + params["fc.bias"]
        shifted = logits - jnp.max(logits, axis=1, keepdims=True)
        log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
        loss = -jnp.sum(labels * log_probs) / logits.shape[0]
        return loss, new_stats

    def step(params, moms, stats, images, labels):
        (loss, new_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, stats, images, labels)
        new_moms = jax.tree_util.tree_map(lambda p, g, m: momentum * m + g + weight_decay * p, params, grads, moms)
        new_params = jax.tree_util.tree_map(lambda p, m: p - lr * m, params, new_moms)
        return loss, new_params, new_moms, new_stats

    key = jax.random.PRNGKey(0)
    params, stats = init(key)
    moms = jax.tree_util.tree_map(jnp.zeros_like, params)
    k1, k2 = jax.random.split(jax.random.PRNGKey(1))
    images = jax.random.normal(k1, (batch, image_size, image_size, 3), jnp.float32)
    labels = jax.nn.one_hot(jax.random.randint(k2, (batch,), 0, classes), classes, dtype=jnp.float32)

    return step, (params, moms, stats, images, labels)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--depth", type=int, default=50, choices=sorted(BLOCKS))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--precision", default="highest", choices=["highest", "high", "default"],
                    help="jax_default_matmul_precision (highest = f32, no TF32)")
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--kernels", help="write the traced steps' kernels here (CSV: name, calls and us per step)")
    args = ap.parse_args()

    import jax

    jax.config.update("jax_default_matmul_precision", args.precision)
    devices = jax.devices()
    if not devices or devices[0].platform != "gpu":
        print(f"jax_resnet_step: no GPU (jax.devices() = {devices})", file=sys.stderr)
        return 2

    step, (params, moms, stats, images, labels) = make_step(args.depth, args.width, args.batch, args.image_size,
                                                           args.classes)

    jstep = jax.jit(step, donate_argnums=(0, 1, 2))
    t0 = time.perf_counter()
    compiled = jstep.lower(params, moms, stats, images, labels).compile()
    compile_s = time.perf_counter() - t0

    state = (params, moms, stats)
    for _ in range(args.warmup):
        loss, *state = compiled(*state, images, labels)
        jax.block_until_ready(state)
    times = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        loss, *state = compiled(*state, images, labels)
        jax.block_until_ready((loss, state))
        times.append((time.perf_counter() - t) * 1e3)
    wall_ms = statistics.median(times)
    result = {"model": f"resnet{args.depth}", "batch": args.batch, "image_size": args.image_size,
              "precision": args.precision, "device": str(devices[0].device_kind), "jax": jax.__version__,
              "compile_s": round(compile_s, 2), "steps": args.repeats, "wall_ms_median": round(wall_ms, 3),
              "wall_ms_min": round(min(times), 3), "loss": float(loss)}

    # Kernel times from a profiler trace of a few steps.
    traced = 10
    with tempfile.TemporaryDirectory() as log_dir:
        try:
            jax.profiler.start_trace(log_dir, create_perfetto_trace=True)
            for _ in range(traced):
                loss, *state = compiled(*state, images, labels)
                jax.block_until_ready((loss, state))
            jax.profiler.stop_trace()
            files = glob.glob(os.path.join(log_dir, "**", "*.json.gz"), recursive=True)
            if files:
                result.update(kernel_times(files[0], traced, args.kernels))
            else:
                result["trace_error"] = "no perfetto trace written: " + ", ".join(
                    glob.glob(os.path.join(log_dir, "**", "*"), recursive=True)[:10])
        except Exception as e:  # the trace is extra; the wall time stands without it
            result["trace_error"] = f"{type(e).__name__}: {e}"

    for k, v in result.items():
        print(f"{k:22} {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


def kernel_times(path, steps, kernels_csv=None):
    """Sums the GPU stream events of a Perfetto/Chrome trace (kernels; copies and memsets apart).

    With kernels_csv, also writes each kernel name's calls and microseconds per step there,
    longest first, for a kernel-by-kernel comparison with passlab's trace."""
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    process, thread = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            process[e["pid"]] = e["args"].get("name", "")
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            thread[(e["pid"], e.get("tid"))] = e["args"].get("name", "")
    gpu_pids = {p for p, n in process.items() if "GPU" in n or "gpu" in n}
    kernel_us, copy_us, n_kernels, start, end = 0.0, 0.0, 0, None, None
    by_name = {}
    threads_seen = set()
    for e in events:
        if e.get("ph") != "X" or e.get("pid") not in gpu_pids:
            continue
        tname = thread.get((e["pid"], e.get("tid")), "")
        threads_seen.add(tname)
        if not tname.lower().startswith("stream"):
            continue  # "XLA Ops", "XLA Modules": aggregates of the same stream events
        name = e.get("name", "")
        dur = float(e.get("dur", 0))
        if name.lower().startswith(("memcpy", "memset")):
            copy_us += dur
            continue
        kernel_us += dur
        n_kernels += 1
        calls, us = by_name.get(name, (0, 0.0))
        by_name[name] = (calls + 1, us + dur)
        ts = float(e["ts"])
        start = ts if start is None else min(start, ts)
        end = ts + dur if end is None else max(end, ts + dur)
    out = {"trace_threads": sorted(threads_seen)[:12]}
    if kernels_csv:
        import csv
        with open(kernels_csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["name", "calls_per_step", "us_per_step"])
            for name, (calls, us) in sorted(by_name.items(), key=lambda kv: -kv[1][1]):
                w.writerow([name, round(calls / steps, 2), round(us / steps, 2)])
    if n_kernels:
        out.update({"kernels_per_step": round(n_kernels / steps, 1),
                    "kernel_ms_per_step": round(kernel_us / steps / 1e3, 3),
                    "copy_ms_per_step": round(copy_us / steps / 1e3, 3),
                    "envelope_ms_per_step": round((end - start) / steps / 1e3, 3)})
    return out


if __name__ == "__main__":
    sys.exit(main())
