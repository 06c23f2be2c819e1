#!/usr/bin/python3
"""Writes the evaluator's cross-check fixtures: for every case a directory
CASE/ with module.hlo, in<i>.npy (the entry parameters) and out<i>.npy (the
output leaves), the expected values computed independently with PyTorch
(Debian's python3-torch) in float64 and stored as float32.

Regenerate (deterministic; the seed is fixed):
    apt-get install -y python3-torch
    /usr/bin/python3 test/eval_fixtures/gen_fixtures.py
test/core/eval/fixtures_test.cc evaluates every case and compares.
"""
import os
import shutil

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261122)
CASES = []


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def t64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def shape_str(a, dtype="f32"):
    return f"{dtype}[{','.join(str(d) for d in a.shape)}]"


def case(name, hlo, inputs, outputs):
    CASES.append((name, hlo.strip() + "\n", inputs, outputs))


def out32(t):
    return t.detach().numpy().astype(np.float32)


# ---------------------------------------------------------------- convolution

def conv2d_case(name, n, c, h, w, o, k, stride=1, pad=(0, 0, 0, 0), dil=1, groups=1):
    """NCHW forward convolution; pad = (top, bottom, left, right)."""
    x, wt = f32(n, c, h, w), f32(o, c // groups, k, k)
    xp = F.pad(t64(x), (pad[2], pad[3], pad[0], pad[1]))
    y = F.conv2d(xp, t64(wt), stride=stride, dilation=dil, groups=groups)
    window = (f"size={k}x{k} stride={stride}x{stride} pad={pad[0]}_{pad[1]}x{pad[2]}_{pad[3]}"
              f" rhs_dilate={dil}x{dil}")
    hlo = f"""
HloModule {name}
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  w = {shape_str(wt)} parameter(1)
  ROOT c = {shape_str(y)} convolution(x, w), window={{{window}}}, dim_labels=bf01_oi01->bf01, feature_group_count={groups}
}}"""
    case(name, hlo, [x, wt], [out32(y)])


conv2d_case("conv_stride2_pad1", 2, 3, 7, 7, 4, 3, stride=2, pad=(1, 1, 1, 1))
conv2d_case("conv_dilated_groups", 1, 4, 8, 8, 6, 3, pad=(2, 2, 2, 2), dil=2, groups=2)
conv2d_case("conv_depthwise_asym_pad", 2, 4, 6, 5, 8, 3, pad=(1, 2, 0, 1), groups=4)

# NHWC input, HWIO kernel, NHWC output.
x, wt = f32(2, 6, 5, 3), f32(3, 3, 3, 4)
y = F.conv2d(t64(x).permute(0, 3, 1, 2), t64(wt).permute(3, 2, 0, 1), stride=(2, 1), padding=1).permute(0, 2, 3, 1)
case("conv_nhwc_hwio", f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  w = {shape_str(wt)} parameter(1)
  ROOT c = {shape_str(y)} convolution(x, w), window={{size=3x3 stride=2x1 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
}}""", [x, wt], [out32(y)])

# 1-D and 3-D.
x, wt = f32(2, 3, 11), f32(5, 3, 4)
y = F.conv1d(F.pad(t64(x), (2, 1)), t64(wt), stride=3)
case("conv1d", f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  w = {shape_str(wt)} parameter(1)
  ROOT c = {shape_str(y)} convolution(x, w), window={{size=4 stride=3 pad=2_1}}, dim_labels=bf0_oi0->bf0
}}""", [x, wt], [out32(y)])
x, wt = f32(1, 2, 5, 4, 6), f32(3, 2, 2, 3, 2)
y = F.conv3d(t64(x), t64(wt), stride=(1, 2, 2), padding=(1, 1, 0))
case("conv3d", f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  w = {shape_str(wt)} parameter(1)
  ROOT c = {shape_str(y)} convolution(x, w), window={{size=2x3x2 stride=1x2x2 pad=1_1x1_1x0_0}}, dim_labels=bf012_oi012->bf012
}}""", [x, wt], [out32(y)])

# Backward data (transposed convolution): lhs dilation, window reversal.
x, wt = f32(2, 4, 4, 4), f32(4, 3, 3, 3)  # conv_transpose weight: [in, out, kh, kw]
y = F.conv_transpose2d(t64(x), t64(wt), stride=2, padding=1, output_padding=1)
case("conv_backward_data", f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  w = {shape_str(wt)} parameter(1)
  ROOT c = {shape_str(y)} convolution(x, w), window={{size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1}}, dim_labels=bf01_io01->bf01
}}""", [x, wt], [out32(y)])

# Backward filter: batch contracts, the output gradient is the window.
n, c, h, o, k, s, p = 2, 3, 7, 4, 3, 2, 1
x, w_unused = f32(n, c, h, h), None
oh = (h + 2 * p - k) // s + 1
g = f32(n, o, oh, oh)
gw = torch.nn.grad.conv2d_weight(t64(x), (o, c, k, k), t64(g), stride=s, padding=p)
ph = k - h - p + (oh - 1) * s
case("conv_backward_filter", f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  g = {shape_str(g)} parameter(1)
  ROOT c = {shape_str(gw)} convolution(x, g), window={{size={oh}x{oh} pad={p}_{ph}x{p}_{ph} rhs_dilate={s}x{s}}}, dim_labels=fb01_io01->fb01
}}""", [x, g], [out32(gw)])

# batch_group_count=2 as a grouped convolution of the batch halves.
x, wt = f32(4, 3, 6), f32(3, 2, 2)  # lhs bf0; rhs i o 0
xb = t64(x).reshape(2, 2, 3, 6).permute(1, 0, 2, 3).reshape(2, 6, 6)
y = F.conv1d(xb, t64(wt).permute(1, 0, 2), groups=2)
case("conv_batch_groups", f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  w = {shape_str(wt)} parameter(1)
  ROOT c = {shape_str(y)} convolution(x, w), window={{size=2}}, dim_labels=bf0_io0->bf0, batch_group_count=2
}}""", [x, wt], [out32(y)])

# ---------------------------------------------------------------- dot

a, b = f32(3, 4, 5), f32(3, 5, 2)
case("dot_batched", f"""
ENTRY e {{
  a = {shape_str(a)} parameter(0)
  b = {shape_str(b)} parameter(1)
  ROOT d = f32[3,4,2] dot(a, b), lhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_batch_dims={{0}}, rhs_contracting_dims={{1}}
}}""", [a, b], [out32(torch.einsum("bij,bjk->bik", t64(a), t64(b)))])
a, b = f32(3, 2, 4, 5), f32(5, 2, 3, 6)
y = torch.einsum("abmc,cban->bmn", t64(a), t64(b))
case("dot_general_two_contracting", f"""
ENTRY e {{
  a = {shape_str(a)} parameter(0)
  b = {shape_str(b)} parameter(1)
  ROOT d = {shape_str(y)} dot(a, b), lhs_batch_dims={{1}}, lhs_contracting_dims={{0,3}}, rhs_batch_dims={{1}}, rhs_contracting_dims={{2,0}}
}}""", [a, b], [out32(y)])
a, b = f32(7, 9), f32(6, 9)
case("dot_transposed_rhs", f"""
ENTRY e {{
  a = {shape_str(a)} parameter(0)
  b = {shape_str(b)} parameter(1)
  ROOT d = f32[7,6] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
}}""", [a, b], [out32(t64(a) @ t64(b).T)])

# ---------------------------------------------------------------- windows

REDUCERS = """
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
"""
x = f32(2, 3, 9, 8)
y = F.max_pool2d(t64(x), 3, stride=2, padding=1, dilation=1)
case("reduce_window_maxpool", REDUCERS + f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  n = f32[] constant(-inf)
  ROOT r = {shape_str(y)} reduce-window(x, n), window={{size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1}}, to_apply=max
}}""", [x], [out32(y)])
y = F.max_pool2d(t64(x), 2, stride=1, dilation=2)
case("reduce_window_window_dilation", REDUCERS + f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  n = f32[] constant(-inf)
  ROOT r = {shape_str(y)} reduce-window(x, n), window={{size=1x1x2x2 rhs_dilate=1x1x2x2}}, to_apply=max
}}""", [x], [out32(y)])
# Base dilation: sums over the zero-interleaved input.
x = f32(1, 1, 4, 5)
xd = torch.zeros(1, 1, 7, 9, dtype=torch.float64)
xd[:, :, ::2, ::2] = t64(x)
y = F.avg_pool2d(F.pad(xd, (1, 1, 1, 0)), 3, stride=2) * 9
case("reduce_window_base_dilation", REDUCERS + f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  z = f32[] constant(0)
  ROOT r = {shape_str(y)} reduce-window(x, z), window={{size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_0x1_1 lhs_dilate=1x1x2x2}}, to_apply=add
}}""", [x], [out32(y)])

# select-and-scatter = max-pool backward.
x = f32(2, 2, 7, 6)
xt = t64(x).requires_grad_(True)
pooled = F.max_pool2d(xt, 3, stride=2, padding=1)
g = f32(*pooled.shape)
pooled.backward(t64(g))
case("select_and_scatter_maxpool_grad", REDUCERS + f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  g = {shape_str(g)} parameter(1)
  z = f32[] constant(0)
  ROOT s = {shape_str(x)} select-and-scatter(x, g, z), window={{size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1}}, select=ge, scatter=add
}}""", [x, g], [out32(xt.grad)])

# ---------------------------------------------------------------- batch norm

for fi, perm in ((1, None), (3, (0, 3, 1, 2))):
    x = f32(3, 4, 5, 2) if fi == 1 else f32(3, 5, 2, 4)
    scale, offset = f32(4), f32(4)
    xt = t64(x) if perm is None else t64(x).permute(*perm)  # NCHW view
    mean = xt.mean(dim=(0, 2, 3))
    var = xt.var(dim=(0, 2, 3), unbiased=False)
    y = F.batch_norm(xt, None, None, t64(scale), t64(offset), training=True, eps=1e-3)
    if perm is not None:
        y = y.permute(0, 2, 3, 1)
    case(f"batch_norm_training_f{fi}", f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  s = f32[4] parameter(1)
  o = f32[4] parameter(2)
  ROOT b = ({shape_str(x)}, f32[4], f32[4]) batch-norm-training(x, s, o), epsilon=0.001, feature_index={fi}
}}""", [x, scale, offset], [out32(y), out32(mean), out32(var)])

x, scale, offset, dy = f32(3, 4, 5, 2), f32(4), f32(4), f32(3, 4, 5, 2)
xt, st, ot = t64(x).requires_grad_(True), t64(scale).requires_grad_(True), t64(offset).requires_grad_(True)
y = F.batch_norm(xt, None, None, st, ot, training=True, eps=1e-3)
y.backward(t64(dy))
mean = t64(x).mean(dim=(0, 2, 3))
var = t64(x).var(dim=(0, 2, 3), unbiased=False)
case("batch_norm_grad", f"""
ENTRY e {{
  x = {shape_str(x)} parameter(0)
  s = f32[4] parameter(1)
  m = f32[4] parameter(2)
  v = f32[4] parameter(3)
  dy = {shape_str(dy)} parameter(4)
  ROOT b = ({shape_str(x)}, f32[4], f32[4]) batch-norm-grad(x, s, m, v, dy), epsilon=0.001, feature_index=1
}}""", [x, scale, mean.numpy().astype(np.float32), var.numpy().astype(np.float32), dy],
     [out32(xt.grad), out32(st.grad), out32(ot.grad)])

# ---------------------------------------------------------------- gather / scatter

table = f32(5, 3)
idx = np.array([4, 0, 2, 2], dtype=np.int32)
case("gather_embedding", f"""
ENTRY e {{
  t = f32[5,3] parameter(0)
  i = s32[4] parameter(1)
  ROOT g = f32[4,3] gather(t, i), offset_dims={{1}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,3}}
}}""", [table, idx], [out32(t64(table)[torch.from_numpy(idx).long()])])

table = f32(2, 5, 3)
idx = np.array([[1, 4, 0, 1], [3, 3, 2, 0]], dtype=np.int32)
res = torch.stack([t64(table)[b][torch.from_numpy(idx[b]).long()] for b in range(2)])
case("gather_batching_dims", f"""
ENTRY e {{
  t = f32[2,5,3] parameter(0)
  i = s32[2,4] parameter(1)
  ROOT g = f32[2,4,3] gather(t, i), offset_dims={{2}}, collapsed_slice_dims={{1}}, start_index_map={{1}}, index_vector_dim=2, slice_sizes={{1,1,3}}, operand_batching_dims={{0}}, start_indices_batching_dims={{0}}
}}""", [table, idx], [out32(res)])

# 2-D windows with out-of-range starts (clamped).
op = f32(6, 7)
starts = np.array([[0, 0], [5, 6], [-3, 2]], dtype=np.int32)
res = []
for r, c in starts:
    r0, c0 = min(max(r, 0), 6 - 2), min(max(c, 0), 7 - 3)
    res.append(t64(op)[r0:r0 + 2, c0:c0 + 3])
case("gather_clamped_windows", f"""
ENTRY e {{
  t = f32[6,7] parameter(0)
  i = s32[3,2] parameter(1)
  ROOT g = f32[3,2,3] gather(t, i), offset_dims={{1,2}}, collapsed_slice_dims={{}}, start_index_map={{0,1}}, index_vector_dim=1, slice_sizes={{2,3}}
}}""", [op, starts], [out32(torch.stack(res))])

operand, upd = f32(5, 3), f32(6, 3)
idx = np.array([1, 3, 1, 0, 4, 1], dtype=np.int32)
res = t64(operand).index_add(0, torch.from_numpy(idx).long(), t64(upd))
case("scatter_add_duplicates", REDUCERS + f"""
ENTRY e {{
  o = f32[5,3] parameter(0)
  i = s32[6] parameter(1)
  u = f32[6,3] parameter(2)
  ROOT s = f32[5,3] scatter(o, i, u), update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add
}}""", [operand, idx, upd], [out32(res)])

operand, upd = f32(2, 4), f32(2, 3)
idx = np.array([[3, 0, 3], [1, 1, 2]], dtype=np.int32)
res = t64(operand).clone()
for b in range(2):
    res[b].index_add_(0, torch.from_numpy(idx[b]).long(), t64(upd[b]))
case("scatter_batching_dims", REDUCERS + f"""
ENTRY e {{
  o = f32[2,4] parameter(0)
  i = s32[2,3] parameter(1)
  u = f32[2,3] parameter(2)
  ROOT s = f32[2,4] scatter(o, i, u), update_window_dims={{}}, inserted_window_dims={{1}}, scatter_dims_to_operand_dims={{1}}, index_vector_dim=2, input_batching_dims={{0}}, scatter_indices_batching_dims={{0}}, to_apply=add
}}""", [operand, idx, upd], [out32(res)])

# ---------------------------------------------------------------- sort

keys = rng.integers(0, 5, size=(3, 8)).astype(np.float32)
vals, order = torch.sort(t64(keys), dim=1, stable=True)
case("sort_stable_key_value", f"""
lt {{ a = f32[] parameter(0)  b = f32[] parameter(1)  c = s32[] parameter(2)  d = s32[] parameter(3)
     ROOT l = pred[] compare(a, b), direction=LT }}
ENTRY e {{
  k = f32[3,8] parameter(0)
  v = s32[3,8] iota(), iota_dimension=1
  ROOT s = (f32[3,8], s32[3,8]) sort(k, v), dimensions={{1}}, is_stable=true, to_apply=lt
}}""", [keys], [out32(vals), order.numpy().astype(np.int32)])
x = f32(5, 3)
vals, _ = torch.sort(t64(x), dim=0, descending=True)
case("sort_descending_dim0", f"""
gt {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT l = pred[] compare(a, b), direction=GT }}
ENTRY e {{
  x = f32[5,3] parameter(0)
  ROOT s = f32[5,3] sort(x), dimensions={{0}}, to_apply=gt
}}""", [x], [out32(vals)])


def main():
    for entry in os.listdir(HERE):
        path = os.path.join(HERE, entry)
        if os.path.isdir(path):
            shutil.rmtree(path)
    for name, hlo, inputs, outputs in CASES:
        d = os.path.join(HERE, name)
        os.makedirs(d)
        with open(os.path.join(d, "module.hlo"), "w") as f:
            f.write(hlo)
        for i, a in enumerate(inputs):
            np.save(os.path.join(d, f"in{i}.npy"), np.ascontiguousarray(a))
        for i, a in enumerate(outputs):
            np.save(os.path.join(d, f"out{i}.npy"), np.ascontiguousarray(a))
    print(f"wrote {len(CASES)} cases to {HERE}")


if __name__ == "__main__":
    main()
