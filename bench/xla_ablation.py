#!/usr/bin/env python3
"""Real XLA's disable-one ablation of a JAX training step, in passlab's record format.

For each XLA pass named (by default every pass of passlab's `gpu` pipeline, from
`passlab opt --list-passes --format json`), the step is compiled by the XLA inside
the installed JAX with that pass disabled (compiler option
`xla_disable_hlo_passes=<name>`, the same DebugOptions field as
`XLA_FLAGS=--xla_disable_hlo_passes=<name>`), and timed against the baseline
compiled in the same process, step by step in alternating order (ABBA), as
`passlab ablate` times a variant against its control. The GPU kernel time of
every step comes from the profiler's trace (the sum of the kernels on the GPU
streams between one step's synchronisation and the next); the wall time from
the host clock.

Results go to OUT/results.jsonl, one record per variant in the format of
passlab's ablation runner (variant, kind, status, block, samples, control_samples,
compile_ms, kernels, check), with OUT/manifest.json, so that

    passlab ablate --report-only --out OUT     # the same statistics and reports
    passlab ablate --compare OUT PASSLAB_SWEEP # side by side with passlab's sweep

read it. The run is resumable and sized for short GPU sessions: it stops starting
blocks when fewer than --budget-s seconds would remain, and a rerun with the
same OUT goes on where it stopped (a variant that was compiling or running when
the process died is recorded as a crash and not retried). XLA's autotuning
results are cached in OUT/autotune between parts.

--dump DIR compiles the baseline once with --xla_dump_to=DIR
--xla_dump_hlo_pass_re=.* (XLA's per-pass dumps, which
`passlab conform --xla-dump DIR` compares with passlab's passes) and exits.

--simulate writes records from a synthetic timing model instead (no JAX, no
GPU): a test of the record format and the report's statistics
(test/cli/cli_xla_ablation.sh). It is never a measurement.
"""
import argparse
import concurrent.futures
import glob
import gzip
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def read_records(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass  # a line cut short by a killed process
    return out


def append_record(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def passes_from_passlab(passlab, pipeline):
    """XLA's names of the passes registered in passlab, each once (`opt --list-passes --format json`)."""
    out = subprocess.run([passlab, "opt", "--list-passes", "--pipeline", pipeline, "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    entries = data if isinstance(data, list) else data.get("passes", [])
    names = []
    for p in entries:
        name = (p.get("xla_name") or p.get("name")) if isinstance(p, dict) else p
        for one in str(name or "").split(" / "):  # "topk-splitter / topk-specializer": two XLA names
            if one and one not in names:
                names.append(one)
    return names


def passes_changed_in_dump(dump_dir):
    """XLA's passes that changed the module, in the order of their first run, from a
    --xla_dump_hlo_pass_re=.* dump (XLA writes `...NNNN.PIPELINE.after_PASS.before_NEXT.txt`
    only after a pass that changed the module when the regex is exactly `.*`)."""
    runs = []
    for path in glob.glob(os.path.join(dump_dir, "*.after_*.before_*.txt")):
        base = os.path.basename(path)
        head, _, rest = base.partition(".after_")
        passname = rest.rsplit(".before_", 1)[0]
        step = head.rsplit(".", 2)[-2] if head.count(".") >= 2 else "0"
        try:
            order = int(step)
        except ValueError:
            order = 0
        runs.append((order, passname))
    names = []
    for _, name in sorted(runs):
        if name not in names and name != "pipeline-start":
            names.append(name)
    return names


def crash_messages(log_path):
    """Variant name -> XLA's fatal message (glog's "F<date> ..." line) that followed the
    variant's `xla_ablation: started` line in the log the parts were written to."""
    messages, current = {}, []
    if not log_path or not os.path.exists(log_path):
        return messages
    with open(log_path, errors="replace") as f:
        for line in f:
            if line.startswith("xla_ablation: started "):
                current = [n for n in line[len("xla_ablation: started "):].rstrip("\n").split("\t") if n]
            elif len(line) > 5 and line[0] == "F" and line[1:5].isdigit() and current:
                for name in current:
                    messages.setdefault(name, line.strip()[:1000])
                current = []
    return messages


def split_steps(kernels, steps):
    """Splits (ts, dur) kernel events of `steps` synchronised steps at the steps-1 largest gaps."""
    kernels = sorted(kernels)
    if steps <= 1 or len(kernels) < steps:
        return [kernels]
    gaps = []
    end = kernels[0][0] + kernels[0][1]
    for i in range(1, len(kernels)):
        gaps.append((kernels[i][0] - end, i))
        end = max(end, kernels[i][0] + kernels[i][1])
    cuts = sorted(i for _, i in sorted(gaps, reverse=True)[:steps - 1])
    groups, begin = [], 0
    for c in cuts + [len(kernels)]:
        groups.append(kernels[begin:c])
        begin = c
    return groups


def trace_kernels(log_dir):
    """GPU stream kernel events (ts_us, dur_us, name) of the Perfetto trace in log_dir."""
    files = (glob.glob(os.path.join(log_dir, "**", "perfetto_trace.json.gz"), recursive=True)
             or glob.glob(os.path.join(log_dir, "**", "*.json.gz"), recursive=True))
    if not files:
        raise RuntimeError("the profiler wrote no Perfetto trace")
    with gzip.open(files[0], "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    process, thread = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            process[e["pid"]] = e["args"].get("name", "")
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            thread[(e["pid"], e.get("tid"))] = e["args"].get("name", "")
    gpu_pids = {p for p, n in process.items() if "gpu" in n.lower()}
    out = []
    for e in events:
        if e.get("ph") != "X" or e.get("pid") not in gpu_pids:
            continue
        if not thread.get((e["pid"], e.get("tid")), "").lower().startswith("stream"):
            continue
        name = e.get("name", "")
        if name.lower().startswith(("memcpy", "memset")):
            continue
        out.append((float(e["ts"]), float(e.get("dur", 0)), name))
    return out


class JaxStep:
    """The training step compiled per variant, timed in ABBA pairs under the profiler."""

    def __init__(self, args):
        import jax
        sys.path.insert(0, HERE)
        import jax_resnet_step

        self.jax = jax
        jax.config.update("jax_default_matmul_precision", args.precision)
        devices = jax.devices()
        if not devices or devices[0].platform != "gpu":
            raise SystemExit(f"xla_ablation: no GPU (jax.devices() = {devices})")
        self.device = str(devices[0].device_kind)
        self.step, self.inputs = jax_resnet_step.make_step(args.depth, args.width, args.batch, args.image_size,
                                                           args.classes)
        self.lowered = jax.jit(self.step).lower(*self.inputs)

    def compile(self, disabled):
        options = {"xla_disable_hlo_passes": disabled} if disabled else {}
        t = time.perf_counter()
        compiled = self.lowered.compile(compiler_options=options) if options else self.lowered.compile()
        return compiled, (time.perf_counter() - t) * 1e3

    def run(self, compiled):
        out = compiled(*self.inputs)
        self.jax.block_until_ready(out)
        return out

    def check(self, variant, baseline):
        """Largest relative difference of the outputs of one step from the same state."""
        import numpy as np
        a = self.jax.tree_util.tree_leaves(self.run(variant))
        b = self.jax.tree_util.tree_leaves(self.run(baseline))
        worst = 0.0
        for x, y in zip(a, b):
            x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
            if not np.all(np.isfinite(x)) and np.all(np.isfinite(y)):
                return {"ok": False, "max_rel_error": None, "reference": "the baseline program (XLA, same process)",
                        "message": "non-finite outputs where the baseline's are finite"}
            norm = float(np.linalg.norm(y)) or 1.0
            worst = max(worst, float(np.linalg.norm(x - y)) / norm)
        ok = worst < 1e-3
        return {"ok": ok, "max_rel_error": worst, "reference": "the baseline program (XLA, same process)",
                "message": f"largest norm-wise error of an output {worst:.3%} against the baseline's "
                           f"(tolerance 0.1%)"}

    def time_pairs(self, variant, baseline, repeats, warmup):
        """kernel/wall ns of `repeats` steps of each, alternating which runs first."""
        for _ in range(warmup):
            self.run(variant)
            self.run(baseline)
        order = []
        for i in range(repeats):
            order += [("v", "b")[i % 2], ("b", "v")[i % 2]]
        wall = []
        kernel, self.trace_error = None, None
        with tempfile.TemporaryDirectory() as log_dir:
            try:
                self.jax.profiler.start_trace(log_dir, create_perfetto_trace=True)
                tracing = True
            except Exception as e:  # no profiler: wall times only
                tracing, self.trace_error = False, f"{type(e).__name__}: {e}"[:300]
            for who in order:
                t = time.perf_counter()
                self.run(variant if who == "v" else baseline)
                wall.append((time.perf_counter() - t) * 1e9)
            if tracing:
                try:
                    self.jax.profiler.stop_trace()
                    groups = split_steps([(ts, dur) for ts, dur, _ in trace_kernels(log_dir)], len(order))
                    if len(groups) != len(order):
                        raise RuntimeError(f"the trace splits into {len(groups)} steps, not {len(order)}")
                    kernel = [sum(d for _, d in g) * 1e3 for g in groups]
                except Exception as e:  # the trace is unusable: wall times only
                    self.trace_error = f"{type(e).__name__}: {e}"[:300]
        if kernel is None:
            kernel = [float("nan")] * len(order)
        samples = {"kernel_ns": [], "wall_ns": []}
        control = {"kernel_ns": [], "wall_ns": [], "control_first": []}
        for i in range(repeats):
            v, b = (2 * i, 2 * i + 1) if i % 2 == 0 else (2 * i + 1, 2 * i)
            samples["kernel_ns"].append(kernel[v])
            samples["wall_ns"].append(wall[v])
            control["kernel_ns"].append(kernel[b])
            control["wall_ns"].append(wall[b])
            control["control_first"].append(i % 2 == 1)
        return samples, control


class SimulatedStep:
    """A synthetic timing model for tests: 10 ms steps, 0.5% noise, effects from --simulate-effect."""

    def __init__(self, args):
        self.device = "simulated"
        self.rng = random.Random(1)
        self.effects = {}
        for item in args.simulate_effect or []:
            name, _, value = item.partition("=")
            self.effects[name] = float(value)

    def compile(self, disabled):
        return {"disabled": disabled}, 1.0

    def check(self, variant, baseline):
        return {"ok": True, "max_rel_error": 0.0}

    def time_pairs(self, variant, baseline, repeats, warmup):
        factor = 1.0 + self.effects.get(variant["disabled"] or "", 0.0)
        samples = {"kernel_ns": [], "wall_ns": []}
        control = {"kernel_ns": [], "wall_ns": [], "control_first": []}
        for i in range(repeats):
            drift = 1.0 + 0.02 * self.rng.random()  # shared by the pair: cancels in the ratio
            v = 1e7 * factor * drift * (1 + self.rng.gauss(0, 0.005))
            b = 1e7 * drift * (1 + self.rng.gauss(0, 0.005))
            samples["kernel_ns"].append(v)
            samples["wall_ns"].append(v * 1.2)
            control["kernel_ns"].append(b)
            control["wall_ns"].append(b * 1.2)
            control["control_first"].append(i % 2 == 1)
        return samples, control


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="sweep directory (results.jsonl, manifest.json); resumable")
    ap.add_argument("--passes", help="comma-separated XLA pass names (default: passlab's registered passes, via --passlab)")
    ap.add_argument("--passes-file", help="XLA pass names, one per line ('#' starts a comment), instead of --passes")
    ap.add_argument("--aa-copies", type=int, default=0,
                    help="A/A copies first: the baseline compiled again apart (a pass name XLA lacks disabled)")
    ap.add_argument("--compile-threads", type=int, default=1,
                    help="variants compiled at once before they are timed one by one (XLA releases the GIL)")
    ap.add_argument("--passlab", default=os.path.join(HERE, "..", "build", "tools", "passlab"),
                    help="passlab binary that lists the passes")
    ap.add_argument("--pipeline", default="gpu", help="passlab pipeline whose passes to disable")
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--precision", default="highest", choices=["highest", "high", "default"])
    ap.add_argument("--repeats", type=int, default=24, help="timed steps of each program per variant")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--budget-s", type=float, default=480, help="stop starting variants after this many seconds")
    ap.add_argument("--log", help="the file this run's output goes to (a crashed variant's record quotes XLA's "
                                  "fatal message from it)")
    ap.add_argument("--finish", action="store_true",
                    help="record every variant started but never finished as a crash (from --log's messages) and stop;"
                         " no JAX needed")
    ap.add_argument("--dump", help="only dump XLA's per-pass HLO of the baseline to this directory")
    ap.add_argument("--simulate", action="store_true", help="synthetic timings (tests only, never a measurement)")
    ap.add_argument("--simulate-effect", action="append", help="with --simulate: PASS=FRACTION (0.05 = 5%% slower)")
    args = ap.parse_args()
    began = time.time()

    os.makedirs(args.out, exist_ok=True)
    if not args.simulate:
        # Before JAX starts: XLA reads XLA_FLAGS once. Autotuning results are
        # shared by the parts of a sweep; the compilation cache stays off (a
        # variant must be compiled, not found).
        cache = os.path.abspath(os.path.join(args.out, "autotune"))
        os.makedirs(cache, exist_ok=True)
        flags = os.environ.get("XLA_FLAGS", "")
        flags += f" --xla_gpu_per_fusion_autotune_cache_dir={cache}"
        if args.dump:
            # Only the step's module (not JAX's small set-up programs), without
            # metadata (conformance ignores it; it triples the files' size).
            flags += (f" --xla_dump_to={os.path.abspath(args.dump)} --xla_dump_hlo_pass_re=.*"
                      " --xla_dump_disable_metadata=true")
        os.environ["XLA_FLAGS"] = flags.strip()

    step = None if args.finish else SimulatedStep(args) if args.simulate else JaxStep(args)
    if args.dump:
        _, ms = step.compile("")
        changed = passes_changed_in_dump(args.dump)
        with open(os.path.join(args.out, "changed_passes.txt"), "w") as f:
            f.write("".join(name + "\n" for name in changed))
        print(f"xla_ablation: XLA's per-pass dumps of the baseline are in {args.dump} (compiled in {ms / 1e3:.1f} s; "
              f"{len(changed)} passes changed the module: {args.out}/changed_passes.txt)")
        return 0
    if args.passes_file:
        with open(args.passes_file) as f:
            passes = []
            for line in f:
                name = line.split("#", 1)[0].strip()
                if name and name not in passes:
                    passes.append(name)
    elif args.passes:
        passes = [p for p in args.passes.split(",") if p]
    elif args.simulate:
        passes = ["algsimp", "priority-fusion", "dce"]
    else:
        passes = passes_from_passlab(args.passlab, args.pipeline)

    results = os.path.join(args.out, "results.jsonl")
    started = os.path.join(args.out, "started.txt")
    manifest = {
        "schema": "passlab.ablation-manifest/1",
        "source": "real XLA (JAX) via bench/xla_ablation.py" + (" --simulate" if args.simulate else ""),
        "model": {"name": f"resnet{args.depth}", "batch": args.batch, "image_size": args.image_size},
        "pipeline": "xla (the XLA inside JAX)", "device": step.device if step else None, "sweep": "disable-one",
        "repeats": args.repeats, "warmup": args.warmup, "variants": len(passes) + args.aa_copies,
        "aa_copies": args.aa_copies, "compile_threads": args.compile_threads,
        "jax": None if args.simulate or not step else step.jax.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""), "host": platform.node(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if not args.finish:
        with open(os.path.join(args.out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)

    # (variant name, kind, XLA passes disabled). An A/A copy disables a pass
    # name XLA does not have: the baseline's program, compiled apart from it.
    plan = [(f"aa-copy-{i}", "aa", f"passlab-aa-copy-{i}") for i in range(1, args.aa_copies + 1)]
    plan += [(f"disable {p}", "disable-one", p) for p in passes]
    records = read_records(results)
    done = {r.get("variant") for r in records if r.get("kind") != "baseline"}
    # A variant started but never finished crashed the process that ran it:
    # recorded as a crash when it compiled alone; retried alone when it was
    # one of several compiling at once (any of them may have been the cause),
    # unless this is --finish.
    retry_alone, messages = set(), crash_messages(args.log)

    def record_crash(name):
        kind = "aa" if name.startswith("aa-copy-") else "disable-one"
        why = messages.get(name)
        error = f"the process died compiling or running it: {why}" if why else \
            "the process died compiling or running it"
        append_record(results, {"variant": name, "kind": kind, "passes": [name.split(" ", 1)[-1]],
                                "status": "crash", "error": error})
        done.add(name)

    if os.path.exists(started):
        with open(started) as f:
            lines = [line.rstrip("\n").partition("\t") for line in f]
        for name, _, mode in lines:
            if not name or name in done:
                continue
            if mode == "parallel" and name not in retry_alone:
                retry_alone.add(name)
                continue
            record_crash(name)
            retry_alone.discard(name)
    if args.finish:
        # One that died beside others and was never retried alone is not
        # known to crash: it is left unmeasured.
        untried = sorted(retry_alone - done)
        print(f"xla_ablation: recorded the variants that died; not measured: {', '.join(untried) or 'none'}; "
              f"report: passlab ablate --report-only --out {args.out}")
        return 0
    todo = [v for v in plan if v[0] not in done]
    print(f"xla_ablation: {len(plan) - len(todo)} of {len(plan)} variants done, {len(todo)} to go", flush=True)

    baseline, baseline_ms = step.compile("")
    block = 1 + max([r.get("block", 0) for r in records] + [0])
    slowest_compile, slowest_time = 0.0, 0.0
    i = 0
    while i < len(todo):
        alone = todo[i][0] in retry_alone
        threads = 1 if alone else max(1, args.compile_threads)
        chunk = [todo[i]]
        while not alone and len(chunk) < threads and i + len(chunk) < len(todo) \
                and todo[i + len(chunk)][0] not in retry_alone:
            chunk.append(todo[i + len(chunk)])
        need = slowest_compile * 1.2 + slowest_time * 1.2 * len(chunk)
        if time.time() - began + need > args.budget_s:
            print(f"xla_ablation: stopping for the budget ({args.budget_s:.0f} s); rerun to go on", flush=True)
            break
        i += len(chunk)
        with open(started, "a") as f:
            for name, _, _ in chunk:
                f.write(name + ("\tparallel" if len(chunk) > 1 else "") + "\n")
        print("xla_ablation: started " + "\t".join(name for name, _, _ in chunk), flush=True)
        # Compile the chunk at once (XLA compiles with the GIL released), then
        # time its variants one after the other with nothing compiling.
        t0 = time.time()
        compiled = {}
        if len(chunk) == 1:
            name, _, disabled = chunk[0]
            try:
                compiled[name] = step.compile(disabled)
            except Exception as e:  # XLA refused: a required pass, or a compile error
                compiled[name] = e
        else:
            with concurrent.futures.ThreadPoolExecutor(len(chunk)) as pool:
                futures = {name: pool.submit(step.compile, disabled) for name, _, disabled in chunk}
                for name, fut in futures.items():
                    try:
                        compiled[name] = fut.result()
                    except Exception as e:
                        compiled[name] = e
        slowest_compile = max(slowest_compile, time.time() - t0)
        for name, kind, disabled in chunk:
            t1 = time.time()
            record = {"variant": name, "kind": kind, "passes": [disabled], "block": block}
            result = compiled.pop(name)
            if isinstance(result, Exception):
                record.update(status="compile-error", error=f"{type(result).__name__}: {result}"[:2000])
                append_record(results, record)
                print(f"  {name:48} compile error: {str(result).splitlines()[0][:100] if str(result) else ''}",
                      flush=True)
                continue
            variant, compile_ms = result
            record["compile_ms"] = compile_ms
            try:
                record["check"] = step.check(variant, baseline)
                samples, control = step.time_pairs(variant, baseline, args.repeats, args.warmup)
            except Exception as e:  # a run error: the variant's program fails on the device
                record.update(status="run-error", error=f"{type(e).__name__}: {e}"[:2000])
                append_record(results, record)
                print(f"  {name:48} run error: {str(e).splitlines()[0][:100] if str(e) else ''}", flush=True)
                continue
            if getattr(step, "trace_error", None):  # wall times only
                record["trace_error"] = step.trace_error
                del samples["kernel_ns"], control["kernel_ns"]
            record.update(status="ok", samples=samples, control_samples=control)
            append_record(results, record)
            # The baseline's own record for this block: its samples are the
            # controls (the report pools baselines across blocks).
            append_record(results, {"variant": "baseline", "kind": "baseline", "block": block, "status": "ok",
                                    "compile_ms": baseline_ms,
                                    "samples": {k: control[k] for k in ("kernel_ns", "wall_ns") if k in control}})
            block += 1
            slowest_time = max(slowest_time, time.time() - t1)
            metric = "kernel_ns" if "kernel_ns" in samples else "wall_ns"
            ratios = sorted(v / c for v, c in zip(samples[metric], control[metric]))
            print(f"  {name:48} {metric} ratio {ratios[len(ratios) // 2]:.4f}  (compile {compile_ms / 1e3:.1f} s, "
                  f"timing {time.time() - t1:.1f} s)", flush=True)
        compiled.clear()
    finished = {r.get("variant") for r in read_records(results)}
    left = len([v for v in plan if v[0] not in finished])
    print(f"xla_ablation: {left} variants left; report: passlab ablate --report-only --out {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
