#!/usr/bin/env python3
"""Makes JAX (XLA) write HLO snapshots of a small jitted step, for passlab to
replay: `passlab run SNAPSHOT.pb --check` (scripts/jax-snapshot-check.sh).

Usage: bench/jax_snapshot.py OUT_DIR [--no-unoptimized]

Sets XLA_FLAGS before JAX starts, so that XLA writes into OUT_DIR/dump:
  --xla_dump_hlo_snapshots              after each run: module_*.hlo_snapshot.pb,
                                        an HloSnapshot (the optimized module, the
                                        arguments and the result);
  --xla_dump_hlo_unoptimized_snapshots  an HloUnoptimizedSnapshot (the module
                                        before XLA's passes, each partition's
                                        arguments); left out with
                                        --no-unoptimized, for XLA versions that
                                        lack the flag (they abort on it).
Also writes the README's other way in: the step's HLO text
(jax.jit(f).lower(*args).as_text(dialect="hlo")) as OUT_DIR/args/module.hlo,
each flattened argument as OUT_DIR/args/<i>.npy and JAX's outputs as
OUT_DIR/args/output_<i>.npy.

The step: a dense layer, tanh, and batch normalisation with the variance
computed as E[x^2] - E[x]^2 (the form XLA's batchnorm_expander produces),
then a sum of squares. Matrix products at "highest" precision (no TF32), as
passlab's evaluator computes.
"""
import os
import sys


def main():
    out = os.path.abspath(sys.argv[1])
    unoptimized = "--no-unoptimized" not in sys.argv[2:]
    flags = [f"--xla_dump_to={out}/dump", "--xla_dump_hlo_snapshots"]
    if unoptimized:
        flags.append("--xla_dump_hlo_unoptimized_snapshots")
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", "")] + flags).strip()
    import jax
    import jax.numpy as jnp
    import numpy as np

    def step(x, w, b):
        h = jnp.tanh(jnp.dot(x, w, precision=jax.lax.Precision.HIGHEST) + b)
        mean = h.mean(axis=0)
        var = (h * h).mean(axis=0) - mean * mean
        y = (h - mean) * jax.lax.rsqrt(var + 1e-5)
        return y, (y * y).sum()

    key = jax.random.PRNGKey(0)
    kx, kw = jax.random.split(key)
    args = (jax.random.normal(kx, (32, 64), jnp.float32), jax.random.normal(kw, (64, 16), jnp.float32) * 0.125,
            jnp.linspace(-0.5, 0.5, 16, dtype=jnp.float32))
    jitted = jax.jit(step)
    os.makedirs(f"{out}/args", exist_ok=True)
    with open(f"{out}/args/module.hlo", "w") as f:
        f.write(jitted.lower(*args).as_text(dialect="hlo"))
    for i, a in enumerate(jax.tree_util.tree_leaves(args)):
        np.save(f"{out}/args/{i}.npy", np.asarray(a))
    outputs = jitted(*args)
    for i, o in enumerate(jax.tree_util.tree_leaves(outputs)):
        np.save(f"{out}/args/output_{i}.npy", np.asarray(o))
    print("jax", jax.__version__, "devices", jax.devices())
    print("XLA_FLAGS", os.environ["XLA_FLAGS"])


if __name__ == "__main__":
    main()
