#!/usr/bin/python3
"""Writes resnet18_train_step.hlo: one SGD step of ResNet-18 (the CIFAR
form: 3x3 stem, stages of 64/128/256/512 channels, two basic blocks each) on
a batch of 2 NHWC 32x32 images with batch-norm-training, softmax cross
entropy and hand-written backward pass, in the HLO an XLA frontend emits
(convolution backward-data/backward-filter forms, batch-norm-grad, ...).

Parameters: images f32[2,32,32,3], one-hot labels f32[2,10], then every
weight. Result: (loss, updated weights...). Used to time the evaluator.

    /usr/bin/python3 test/eval_fixtures/gen_resnet18.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
N, CLASSES, LR = 2, 10, 0.01


def fmt(dims):
    return f"f32[{','.join(str(d) for d in dims)}]"


class Builder:
    def __init__(self):
        self.lines, self.params, self.count = [], [], 0

    def emit(self, dims, text, prefix="v"):
        self.count += 1
        name = f"{prefix}{self.count}"
        self.lines.append(f"  {name} = {fmt(dims) if isinstance(dims, (list, tuple)) else dims} {text}")
        return (name, list(dims) if isinstance(dims, (list, tuple)) else dims)

    def param(self, dims, name):
        v = (name, list(dims))
        self.params.append(v)
        return v

    def const(self, value):
        return self.emit([], f"constant({value})", "c")

    def bcast(self, scalar, dims, bdims=()):
        return self.emit(dims, f"broadcast({scalar[0]}), dimensions={{{','.join(map(str, bdims))}}}")

    def binary(self, op, a, b):
        return self.emit(a[1], f"{op}({a[0]}, {b[0]})")

    def unary(self, op, a):
        return self.emit(a[1], f"{op}({a[0]})")

    def scale(self, a, s):
        return self.binary("multiply", a, self.bcast(self.const(s), a[1]))

    def reduce(self, a, dims, comp="add", init="0"):
        out = [d for i, d in enumerate(a[1]) if i not in dims]
        z = self.const(init)
        return self.emit(out, f"reduce({a[0]}, {z[0]}), dimensions={{{','.join(map(str, dims))}}}, to_apply={comp}")

    def gte(self, t, i, dims):
        return self.emit(dims, f"get-tuple-element({t[0]}), index={i}")


b = Builder()


def conv_out(h, k, s, p):
    return (h + 2 * p - k) // s + 1


def conv(x, w, s, p):
    n, h, _, c = x[1]
    k, o = w[1][0], w[1][3]
    ho = conv_out(h, k, s, p)
    y = b.emit([n, ho, ho, o], f"convolution({x[0]}, {w[0]}), window={{size={k}x{k} stride={s}x{s} pad={p}_{p}x{p}_{p}}}, "
                               "dim_labels=b01f_01io->b01f")

    def backward(dy):
        # Backward data: dilate dy by the stride, pad, reversed kernel.
        lo = k - 1 - p
        hi = h - (ho - 1) * s - 1 - lo + k - 1
        dx = b.emit([n, h, h, c], f"convolution({dy[0]}, {w[0]}), window={{size={k}x{k} pad={lo}_{hi}x{lo}_{hi} "
                                  f"lhs_dilate={s}x{s} rhs_reversal=1x1}}, dim_labels=b01f_01oi->b01f")
        # Backward filter: the batch contracts, dy is the (dilated) window.
        fhi = k - h - p + (ho - 1) * s
        dw = b.emit(w[1], f"convolution({x[0]}, {dy[0]}), window={{size={ho}x{ho} pad={p}_{fhi}x{p}_{fhi} "
                          f"rhs_dilate={s}x{s}}}, dim_labels=f01b_i01o->01bf")
        return dx, dw

    return y, backward


def batch_norm(x, scale, offset):
    c = x[1][3]
    t = b.emit(f"({fmt(x[1])}, f32[{c}], f32[{c}])",
               f"batch-norm-training({x[0]}, {scale[0]}, {offset[0]}), epsilon=0.001, feature_index=3")
    y, mean, var = b.gte(t, 0, x[1]), b.gte(t, 1, [c]), b.gte(t, 2, [c])

    def backward(dy):
        g = b.emit(f"({fmt(x[1])}, f32[{c}], f32[{c}])",
                   f"batch-norm-grad({x[0]}, {scale[0]}, {mean[0]}, {var[0]}, {dy[0]}), epsilon=0.001, feature_index=3")
        return b.gte(g, 0, x[1]), b.gte(g, 1, [c]), b.gte(g, 2, [c])

    return y, backward


def relu(x):
    zero = b.bcast(b.const(0), x[1])
    y = b.binary("maximum", x, zero)

    def backward(dy):
        mask = b.emit(f"pred[{','.join(map(str, x[1]))}]", f"compare({y[0]}, {zero[0]}), direction=GT")
        return b.emit(x[1], f"select({mask[0]}, {dy[0]}, {zero[0]})")

    return y, backward


weights, grads = [], {}


def new_param(dims, name):
    p = b.param(dims, name)
    weights.append(p)
    return p


def conv_bn(x, cin, cout, k, s, p, name):
    w = new_param([k, k, cin, cout], f"{name}_w")
    g = new_param([cout], f"{name}_scale")
    o = new_param([cout], f"{name}_offset")
    y, conv_bw = conv(x, w, s, p)
    z, bn_bw = batch_norm(y, g, o)

    def backward(dz):
        dy, dg, do = bn_bw(dz)
        dx, dw = conv_bw(dy)
        grads[w[0]], grads[g[0]], grads[o[0]] = dw, dg, do
        return dx

    return z, backward


def basic_block(x, cin, cout, stride, name):
    a, a_bw = conv_bn(x, cin, cout, 3, stride, 1, f"{name}_a")
    ar, ar_bw = relu(a)
    c, c_bw = conv_bn(ar, cout, cout, 3, 1, 1, f"{name}_b")
    if stride != 1 or cin != cout:
        sc, sc_bw = conv_bn(x, cin, cout, 1, stride, 0, f"{name}_down")
    else:
        sc, sc_bw = x, None
    s = b.binary("add", c, sc)
    out, out_bw = relu(s)

    def backward(dout):
        ds = out_bw(dout)
        dx = a_bw(ar_bw(c_bw(ds)))
        dsc = sc_bw(ds) if sc_bw else ds
        return b.binary("add", dx, dsc)

    return out, backward


images = b.param([N, 32, 32, 3], "images")
labels = b.param([N, CLASSES], "labels")
x, stem_bw = conv_bn(images, 3, 64, 3, 1, 1, "stem")
x, stem_relu_bw = relu(x)
blocks = []
cin = 64
for stage, cout in enumerate([64, 128, 256, 512]):
    for i in range(2):
        stride = 2 if stage > 0 and i == 0 else 1
        x, bw = basic_block(x, cin, cout, stride, f"s{stage}b{i}")
        blocks.append(bw)
        cin = cout
# Head: global average pool, dense, softmax cross entropy.
hw = x[1][1] * x[1][2]
pooled = b.scale(b.reduce(x, [1, 2]), 1.0 / hw)
fc_w = new_param([512, CLASSES], "fc_w")
fc_b = new_param([CLASSES], "fc_b")
logits = b.binary("add", b.emit([N, CLASSES], f"dot({pooled[0]}, {fc_w[0]}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}"),
                  b.bcast(fc_b, [N, CLASSES], (1,)))
m = b.reduce(logits, [1], "max", "-inf")
shifted = b.binary("subtract", logits, b.bcast(m, [N, CLASSES], (0,)))
lse = b.unary("log", b.reduce(b.unary("exponential", shifted), [1]))
logp = b.binary("subtract", shifted, b.bcast(lse, [N, CLASSES], (0,)))
loss = b.scale(b.reduce(b.binary("multiply", labels, logp), [0, 1]), -1.0 / N)
# Backward.
dlogits = b.scale(b.binary("subtract", b.unary("exponential", logp), labels), 1.0 / N)
grads[fc_w[0]] = b.emit([512, CLASSES], f"dot({pooled[0]}, {dlogits[0]}), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}")
grads[fc_b[0]] = b.reduce(dlogits, [0])
dpooled = b.scale(b.emit([N, 512], f"dot({dlogits[0]}, {fc_w[0]}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}"), 1.0 / hw)
dx = b.emit(x[1], f"broadcast({dpooled[0]}), dimensions={{0,3}}")
for bw in reversed(blocks):
    dx = bw(dx)
stem_bw(stem_relu_bw(dx))
# SGD update.
updated = [b.binary("subtract", w, b.scale(grads[w[0]], LR)) for w in weights]
outputs = [loss] + updated
shapes = ", ".join(fmt(o[1]) for o in outputs)
b.lines.append(f"  ROOT result = ({shapes}) tuple({', '.join(o[0] for o in outputs)})")

text = ["HloModule resnet18_train_step", "",
        "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }",
        "max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }", "", "ENTRY train_step {"]
for i, (name, dims) in enumerate(b.params):
    text.append(f"  {name} = {fmt(dims)} parameter({i})")
text += b.lines + ["}", ""]
with open(os.path.join(HERE, "resnet18_train_step.hlo"), "w") as f:
    f.write("\n".join(text))
print(f"{len(b.params)} parameters, {len(b.lines)} instructions")
