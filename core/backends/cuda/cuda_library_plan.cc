#include "core/backends/cuda/cuda_library_plan.h"

#include <algorithm>
#include <optional>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"

namespace passlab {
namespace {

// A batch of [rows][cols] matrices inside a buffer: element strides of a row
// step and a column step, and each matrix's offset (row-major over the batch
// dimensions). SplitBatch turns the offsets into an inner strided batch
// (batch_stride) and outer offsets.
struct MatrixView {
  int64_t rows = 1, cols = 1;
  int64_t row_stride = 0, col_stride = 0, batch_stride = 0;
  std::vector<int64_t> batch_offsets = {0};
  std::vector<int64_t> outer_offsets = {0};
};

absl::StatusOr<MatrixView> ViewOf(const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& rows,
                                  const std::vector<int64_t>& cols, std::string_view what) {
  std::vector<int64_t> strides = PhysicalStrides(s);
  std::vector<int64_t> r = GroupOffsets(s, strides, rows), c = GroupOffsets(s, strides, cols);
  std::optional<int64_t> sr = OffsetProgression(r), sc = OffsetProgression(c);
  if (!sr || !sc) {
    return absl::UnimplementedError(StrCat(what, " ", s.ToString(), ": its layout does not give strided matrices"));
  }
  MatrixView v{static_cast<int64_t>(r.size()), static_cast<int64_t>(c.size()), *sr, *sc, 0};
  v.batch_offsets = GroupOffsets(s, strides, batch);
  return v;
}

MatrixView Transposed(const MatrixView& v) {
  MatrixView t = v;
  std::swap(t.rows, t.cols);
  std::swap(t.row_stride, t.col_stride);
  return t;
}

// cuBLASLt takes one batch stride per matrix. Batch dimensions that are not
// one progression in every operand (attention's [batch, seq, heads, dim]
// with batch dimensions batch and heads) are split: the innermost batch
// dimensions that are a progression in every view form cuBLASLt's strided
// batch, the others become separate calls at `outer_offsets`. Returns the
// inner batch count.
int64_t SplitBatch(const std::vector<int64_t>& batch_sizes, const std::vector<MatrixView*>& views) {
  int64_t total = 1;
  for (int64_t b : batch_sizes) total *= b;
  for (MatrixView* v : views) {
    v->batch_stride = 0;
    v->outer_offsets = {0};
    // An operand without batch dimensions is the same matrix in every batch.
    if (v->batch_offsets.size() == 1 && total > 1) v->batch_offsets.assign(total, v->batch_offsets[0]);
    if (total > 0 && static_cast<int64_t>(v->batch_offsets.size()) != total) return -1;
  }
  if (total == 0) return 0;
  // The last t batch dimensions as the strided batch, from all of them down
  // to none (one call per batch, which always fits).
  for (size_t t = batch_sizes.size() + 1; t-- > 0;) {
    int64_t inner = 1;
    for (size_t i = batch_sizes.size() - t; i < batch_sizes.size(); ++i) inner *= batch_sizes[i];
    std::vector<int64_t> strides;
    bool fits = true;
    for (const MatrixView* v : views) {
      const std::vector<int64_t>& off = v->batch_offsets;
      int64_t stride = inner > 1 ? off[1] - off[0] : 0;
      for (int64_t o = 0; fits && o < total / inner; ++o) {
        for (int64_t i = 0; fits && i < inner; ++i) fits = off[o * inner + i] == off[o * inner] + i * stride;
      }
      strides.push_back(stride);
    }
    if (!fits) continue;
    for (size_t k = 0; k < views.size(); ++k) {
      views[k]->batch_stride = strides[k];
      views[k]->outer_offsets.clear();
      for (int64_t o = 0; o < total / inner; ++o) views[k]->outer_offsets.push_back(views[k]->batch_offsets[o * inner]);
    }
    return inner;
  }
  return -1;  // not reached
}

// The column-major storage of a view: as stored (unit row stride) or as a
// stored transpose (unit column stride).
struct Stored {
  bool transposed = false;
  BlasLtMatrix matrix;
};

absl::StatusOr<Stored> ColumnMajor(const MatrixView& v, PrimitiveType type, std::string_view what) {
  int64_t rows = std::max<int64_t>(v.rows, 1), cols = std::max<int64_t>(v.cols, 1);
  if (v.rows <= 1 || v.row_stride == 1) {
    int64_t ld = v.cols > 1 ? v.col_stride : rows;
    if (ld >= rows) return Stored{false, BlasLtMatrix{type, rows, cols, ld, v.batch_stride}};
  }
  if (v.cols <= 1 || v.col_stride == 1) {
    int64_t ld = v.rows > 1 ? v.row_stride : cols;
    if (ld >= cols) return Stored{true, BlasLtMatrix{type, cols, rows, ld, v.batch_stride}};
  }
  return absl::UnimplementedError(StrCat(what, ": neither its rows nor its columns are contiguous"));
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) out.push_back(i);
  }
  return out;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

bool IsHalfType(PrimitiveType t) { return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16; }

std::string MatrixString(bool trans, const BlasLtMatrix& m) {
  return StrCat(trans ? "T" : "N", "(", PrimitiveTypeName(m.type), " ", m.rows, "x", m.cols, " ld ", m.ld,
                m.batch_stride != 0 ? StrCat(" bs ", m.batch_stride) : "", ")");
}

}  // namespace

// ---------------------------------------------------------------- gemm

bool Tf32Allowed(const PrecisionConfig& precision) {
  if (!precision.algorithm.empty()) return precision.algorithm.find("tf32") != std::string::npos;
  for (PrecisionLevel p : precision.operand_precision) {
    if (p == PrecisionLevel::kHighest) return false;
  }
  return true;
}

absl::StatusOr<BlasLtGemmPlan> PlanBlasLtGemm(const HloInstruction& inst) {
  ASSIGN_OR_RETURN(GemmCall call, AnalyzeGemmCall(inst));
  std::string where = StrCat(inst.name(), " (cuBLASLt)");
  const DotDimensionNumbers& d = call.config.dot_dimension_numbers;
  const Shape& ls = inst.operand(0)->shape();
  const Shape& rs = inst.operand(1)->shape();
  const Shape& out = call.result_shape;
  PrimitiveType in_type = ls.element_type(), out_type = out.element_type();
  if (rs.element_type() != in_type) {
    return absl::UnimplementedError(StrCat(where, ": mixed operand types ", PrimitiveTypeName(in_type), " and ",
                                           PrimitiveTypeName(rs.element_type())));
  }
  bool types_ok = (in_type == PrimitiveType::kF32 && out_type == PrimitiveType::kF32) ||
                  (in_type == PrimitiveType::kF64 && out_type == PrimitiveType::kF64) ||
                  (IsHalfType(in_type) && (out_type == in_type || out_type == PrimitiveType::kF32));
  if (!types_ok) {
    return absl::UnimplementedError(StrCat(where, ": no cuBLASLt gemm for ", PrimitiveTypeName(in_type), " -> ",
                                           PrimitiveTypeName(out_type)));
  }
  if (call.config.alpha_imag != 0) return absl::UnimplementedError(StrCat(where, ": complex alpha"));

  ASSIGN_OR_RETURN(
      MatrixView lhs,
      ViewOf(ls, d.lhs_batch_dimensions, FreeDims(ls.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions),
             d.lhs_contracting_dimensions, StrCat(where, ": lhs")));
  ASSIGN_OR_RETURN(MatrixView rhs, ViewOf(rs, d.rhs_batch_dimensions, d.rhs_contracting_dimensions,
                                          FreeDims(rs.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions),
                                          StrCat(where, ": rhs")));
  int64_t nb = std::max(d.lhs_batch_dimensions.size(), d.rhs_batch_dimensions.size());
  int64_t nm = ls.rank() - d.lhs_batch_dimensions.size() - d.lhs_contracting_dimensions.size();
  auto result_view = [&](const Shape& s, std::string_view what) {
    return ViewOf(s, Range(0, nb), Range(nb, nb + nm), Range(nb + nm, s.rank()), StrCat(where, ": ", what));
  };
  ASSIGN_OR_RETURN(MatrixView dv, result_view(out, "result"));
  absl::StatusOr<MatrixView> cv = MatrixView{};
  if (call.c_operand >= 0) {
    cv = result_view(inst.operand(call.c_operand)->shape(), "c");
    if (!cv.ok()) return cv.status();
  }
  std::vector<int64_t> batch_sizes;  // from whichever operand has the batch dimensions
  const bool lhs_batched = d.lhs_batch_dimensions.size() >= d.rhs_batch_dimensions.size();
  for (int64_t dim : lhs_batched ? d.lhs_batch_dimensions : d.rhs_batch_dimensions) {
    batch_sizes.push_back((lhs_batched ? ls : rs).dimensions(dim));
  }
  std::vector<MatrixView*> views = {&lhs, &rhs, &dv};
  if (call.c_operand >= 0) views.push_back(&*cv);
  int64_t inner_batch = SplitBatch(batch_sizes, views);
  if (inner_batch < 0) return absl::InternalError(StrCat(where, ": batch offsets do not match the batch dimensions"));

  BlasLtGemmPlan plan;
  plan.batch = inner_batch;
  plan.alpha = call.config.alpha_real;
  plan.epilogue = call.config.epilogue;
  plan.compute = in_type == PrimitiveType::kF64 ? BlasLtComputeType::k64F : BlasLtComputeType::k32F;
  plan.tf32 = in_type == PrimitiveType::kF32 && Tf32Allowed(call.config.precision_config);
  plan.flops = 2 * call.batch * call.m * call.n * call.k;
  // Row-major results (the default layout) are computed as D^T = B^T A^T.
  absl::StatusOr<Stored> d_swapped = ColumnMajor(Transposed(dv), out_type, StrCat(where, ": result"));
  plan.swapped = d_swapped.ok() && !d_swapped->transposed;
  if (!plan.swapped && EpilogueHasBias(plan.epilogue)) {
    return absl::UnimplementedError(StrCat(where, ": a bias epilogue needs a result whose last dimension is minor"));
  }
  MatrixView a_view = plan.swapped ? Transposed(rhs) : lhs;
  MatrixView b_view = plan.swapped ? Transposed(lhs) : rhs;
  MatrixView d_view = plan.swapped ? Transposed(dv) : dv;
  ASSIGN_OR_RETURN(Stored a, ColumnMajor(a_view, in_type, StrCat(where, plan.swapped ? ": rhs" : ": lhs")));
  ASSIGN_OR_RETURN(Stored b, ColumnMajor(b_view, in_type, StrCat(where, plan.swapped ? ": lhs" : ": rhs")));
  ASSIGN_OR_RETURN(Stored dm, ColumnMajor(d_view, out_type, StrCat(where, ": result")));
  if (dm.transposed) {
    return absl::UnimplementedError(StrCat(where, ": result ", out.ToString(), " is neither row- nor column-major"));
  }
  plan.m = plan.swapped ? call.n : call.m;
  plan.n = plan.swapped ? call.m : call.n;
  plan.k = call.k;
  plan.transpose_a = a.transposed;
  plan.transpose_b = b.transposed;
  plan.a = a.matrix;
  plan.b = b.matrix;
  plan.d = dm.matrix;
  plan.c = plan.d;
  plan.a_buffer = plan.swapped ? 1 : 0;
  plan.b_buffer = plan.swapped ? 0 : 1;
  if (dv.outer_offsets.size() > 1) {
    plan.outer_a = a_view.outer_offsets;
    plan.outer_b = b_view.outer_offsets;
    plan.outer_d = dv.outer_offsets;
    plan.outer_c = call.c_operand >= 0 ? cv->outer_offsets : plan.outer_d;
  }
  if (call.c_operand >= 0) {
    const Shape& cs = inst.operand(call.c_operand)->shape();
    if (cs.element_type() != out_type) {
      return absl::UnimplementedError(StrCat(where, ": c is ", PrimitiveTypeName(cs.element_type()), ", the result ",
                                             PrimitiveTypeName(out_type)));
    }
    ASSIGN_OR_RETURN(Stored cm, ColumnMajor(plan.swapped ? Transposed(*cv) : *cv, out_type, StrCat(where, ": c")));
    if (cm.transposed) return absl::UnimplementedError(StrCat(where, ": c is laid out unlike the result"));
    plan.c = cm.matrix;
    plan.c_buffer = call.c_operand;
    plan.beta = call.config.beta;
  }
  if (call.bias_operand >= 0) {
    const Shape& bs = inst.operand(call.bias_operand)->shape();
    if (bs.dimensions(0) != plan.m) {
      return absl::UnimplementedError(StrCat(where, ": the bias runs along the last of several output dimensions"));
    }
    plan.bias_buffer = call.bias_operand;
    plan.bias_type = bs.element_type();
  }
  return plan;
}

std::string BlasLtGemmPlanToString(const BlasLtGemmPlan& p) {
  return StrCat("m=", p.m, " n=", p.n, " k=", p.k, " batch=", p.batch,
                p.outer_d.size() > 1 ? StrCat(" x", p.outer_d.size(), " calls") : "", p.swapped ? " swapped" : "",
                " A=", MatrixString(p.transpose_a, p.a), " B=", MatrixString(p.transpose_b, p.b),
                p.c_buffer >= 0 ? StrCat(" C=", MatrixString(false, p.c), " beta=", p.beta) : "",
                " D=", MatrixString(false, p.d), " alpha=", p.alpha, " epilogue=", GemmEpilogueName(p.epilogue));
}

// ---------------------------------------------------------------- convolution

namespace {

DnnTensor TensorOf(const Shape& s, int64_t batch_dim, int64_t feature_dim, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> strides = PhysicalStrides(s);
  DnnTensor t;
  auto add = [&](int64_t dim) {
    t.dims.push_back(s.dimensions(dim));
    t.strides.push_back(strides[dim]);
  };
  add(batch_dim);
  add(feature_dim);
  for (int64_t dim : spatial) add(dim);
  return t;
}

// Whether dimensions `order` of `s` are dense in that order (the last one
// contiguous).
bool DenseInOrder(const Shape& s, const std::vector<int64_t>& order) {
  std::vector<int64_t> strides = PhysicalStrides(s);
  int64_t expect = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (s.dimensions(*it) != 1 && strides[*it] != expect) return false;
    expect *= s.dimensions(*it);
  }
  return true;
}

void AddUnitSpatial(DnnTensor& t) {
  t.dims.push_back(1);
  t.strides.push_back(1);
}

}  // namespace

absl::StatusOr<DnnConvPlan> PlanDnnConvolution(const HloInstruction& inst) {
  ASSIGN_OR_RETURN(ConvCall call, AnalyzeConvCall(inst));
  std::string where = StrCat(inst.name(), " (cuDNN)");
  const ConvolutionDimensionNumbers& dn = call.dnums;
  DnnConvPlan plan;
  plan.kind = call.kind;
  plan.type = call.input_shape.element_type();
  plan.tf32 = plan.type == PrimitiveType::kF32 && Tf32Allowed(inst.attrs().precision_config);
  for (const Shape* s : {&call.filter_shape, &call.output_shape}) {
    if (s->element_type() != plan.type) {
      return absl::UnimplementedError(StrCat(where, ": mixed element types ", PrimitiveTypeName(plan.type), " and ",
                                             PrimitiveTypeName(s->element_type())));
    }
  }
  switch (plan.type) {
    case PrimitiveType::kF32: case PrimitiveType::kF16: case PrimitiveType::kBF16: plan.compute = PrimitiveType::kF32; break;
    case PrimitiveType::kF64: plan.compute = PrimitiveType::kF64; break;
    default:
      return absl::UnimplementedError(StrCat(where, ": no cuDNN convolution for ", PrimitiveTypeName(plan.type)));
  }
  if (dn.input_spatial_dimensions.empty() || dn.input_spatial_dimensions.size() > 3) {
    return absl::UnimplementedError(StrCat(where, ": ", dn.input_spatial_dimensions.size(), " spatial dimensions"));
  }
  // cuDNN computes a cross-correlation, or a convolution (every spatial
  // dimension's window reversed): XLA passes all-reversed 2-D windows as
  // convolution mode (conv_rewriter.cc CanImplementAsGpuForwardConv,
  // gpu_conv_runner.cc set_convolution_not_crosscorr).
  size_t reversed = 0;
  for (const WindowDimension& w : call.window.dimensions) reversed += w.window_reversal ? 1 : 0;
  if (reversed != 0 && (reversed != call.window.dimensions.size() || reversed != 2)) {
    return absl::UnimplementedError(StrCat(where, ": window reversal in some dimensions ", call.window.ToString()));
  }
  plan.convolution_mode = reversed != 0;
  for (const WindowDimension& w : call.window.dimensions) {
    if (w.padding_low != w.padding_high) {
      return absl::UnimplementedError(StrCat(where, ": asymmetric padding ", call.window.ToString(),
                                             " (GpuConvPaddingLegalization makes it symmetric)"));
    }
    if (w.base_dilation != 1) {
      return absl::UnimplementedError(StrCat(where, ": base dilation ", call.window.ToString()));
    }
    plan.padding.push_back(w.padding_low);
    plan.stride.push_back(w.stride);
    plan.dilation.push_back(w.window_dilation);
  }
  plan.x = TensorOf(call.input_shape, dn.input_batch_dimension, dn.input_feature_dimension,
                    dn.input_spatial_dimensions);
  plan.y = TensorOf(call.output_shape, dn.output_batch_dimension, dn.output_feature_dimension,
                    dn.output_spatial_dimensions);
  const Shape& fs = call.filter_shape;
  plan.w_dims = {fs.dimensions(dn.kernel_output_feature_dimension), fs.dimensions(dn.kernel_input_feature_dimension)};
  std::vector<int64_t> kcrs = {dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension};
  std::vector<int64_t> krsc = {dn.kernel_output_feature_dimension};
  for (int64_t dim : dn.kernel_spatial_dimensions) {
    plan.w_dims.push_back(fs.dimensions(dim));
    kcrs.push_back(dim);
    krsc.push_back(dim);
  }
  krsc.push_back(dn.kernel_input_feature_dimension);
  // The filter follows the activations' format: channels-last x (its
  // feature stride 1, below every spatial stride) wants a KRSC filter.
  bool channels_last = plan.x.strides[1] == 1 && plan.x.dims[1] > 1;
  for (size_t i = 2; i < plan.x.dims.size(); ++i) {
    if (plan.x.dims[i] > 1 && plan.x.strides[i] < plan.x.strides[1]) channels_last = false;
  }
  plan.packed_order = channels_last ? DnnFilterOrder::kKRSC : DnnFilterOrder::kKCRS;
  if (DenseInOrder(fs, channels_last ? krsc : kcrs)) {
    plan.w_order = plan.packed_order;
  } else {
    plan.w_order = DnnFilterOrder::kStrided;
  }
  {
    std::vector<int64_t> strides = PhysicalStrides(fs);
    for (int64_t dim : kcrs) plan.w_strides.push_back(strides[dim]);
    plan.w_bytes = BufferBytes(fs);
  }
  plan.groups = call.feature_group_count;
  if (dn.input_spatial_dimensions.size() == 1) {  // cuDNN needs at least two spatial dimensions
    AddUnitSpatial(plan.x);
    AddUnitSpatial(plan.y);
    plan.w_dims.push_back(1);
    plan.w_strides.push_back(1);
    plan.padding.push_back(0);
    plan.stride.push_back(1);
    plan.dilation.push_back(1);
  }
  int64_t result = inst.operand_count();
  switch (call.kind) {
    case LibraryCallKind::kConvBackwardInput:
      plan.y_buffer = 0, plan.w_buffer = 1, plan.x_buffer = result;
      break;
    case LibraryCallKind::kConvBackwardFilter:
      plan.x_buffer = 0, plan.y_buffer = 1, plan.w_buffer = result;
      break;
    default:
      plan.x_buffer = 0, plan.w_buffer = 1, plan.y_buffer = result;
      break;
  }
  if (call.kind == LibraryCallKind::kConvBiasActivationForward) {
    plan.bias_buffer = call.bias_operand;
    plan.bias.dims.assign(plan.y.dims.size(), 1);
    plan.bias.dims[1] = plan.y.dims[1];
    plan.bias.strides.assign(plan.y.dims.size(), 1);
    plan.bias.strides[0] = plan.y.dims[1];
    if (inst.operand(plan.bias_buffer)->shape().element_type() != plan.type) {
      return absl::UnimplementedError(StrCat(where, ": bias type differs from the convolution's"));
    }
    if (call.side_input_operand >= 0) {
      plan.side_input_buffer = call.side_input_operand;
      const Shape& ss = inst.operand(call.side_input_operand)->shape();
      plan.side_input = TensorOf(ss, dn.output_batch_dimension, dn.output_feature_dimension,
                                 dn.output_spatial_dimensions);
      if (dn.output_spatial_dimensions.size() == 1) AddUnitSpatial(plan.side_input);
    }
    plan.conv_scale = call.config.conv_result_scale;
    plan.side_input_scale = call.config.side_input_scale;
    plan.activation = call.config.activation_mode;
  }
  plan.scratch_bytes = call.scratch_bytes;
  int64_t out_points = 1, window_points = 1;
  for (size_t i = 2; i < plan.y.dims.size(); ++i) out_points *= plan.y.dims[i];
  for (size_t i = 2; i < plan.w_dims.size(); ++i) window_points *= plan.w_dims[i];
  plan.flops = 2 * plan.y.dims[0] * plan.y.dims[1] * out_points * plan.w_dims[1] * window_points;
  return plan;
}

std::string DnnConvPlanToString(const DnnConvPlan& p) {
  auto tensor = [](const DnnTensor& t) { return StrCat("[", Join(t.dims, ","), "] strides [", Join(t.strides, ","), "]"); };
  return StrCat(LibraryCallKindName(p.kind), " ", PrimitiveTypeName(p.type), " x", tensor(p.x), " w[",
                Join(p.w_dims, ","), "] ", p.w_order == DnnFilterOrder::kKCRS   ? "KCRS"
                : p.w_order == DnnFilterOrder::kKRSC ? "KRSC"
                                                     : StrCat("strided [", Join(p.w_strides, ","), "] as ",
                                                              p.packed_order == DnnFilterOrder::kKRSC ? "KRSC" : "KCRS"), " y", tensor(p.y),
                " pad [", Join(p.padding, ","), "] stride [", Join(p.stride, ","), "] dilation [",
                Join(p.dilation, ","), "] groups ", p.groups, p.convolution_mode ? " convolution" : "", " buffers x", p.x_buffer, " w", p.w_buffer, " y",
                p.y_buffer);
}

}  // namespace passlab
