// Small helpers shared by the op families: threads, element copies, double
// views of literals, and reducer application.
#include <algorithm>
#include <cstring>
#include <thread>

#include "core/eval/eval_internal.h"
#include "core/ir/status_macros.h"

namespace passlab::eval {

void ParallelFor(int64_t n, int64_t cost, int threads, const std::function<void(int64_t, int64_t)>& work) {
  int64_t t = std::min<int64_t>({threads, n, std::max<int64_t>(1, cost >> 16)});
  if (t <= 1) {
    work(0, n);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t k = 1; k < t; ++k) pool.emplace_back([&, k] { work(n * k / t, n * (k + 1) / t); });
  work(0, n / t);
  for (std::thread& th : pool) th.join();
}

Literal Element(const Literal& l, int64_t i) {
  Literal s(Shape::Scalar(l.shape().element_type()));
  int w = PrimitiveByteWidth(l.shape().element_type());
  std::memcpy(s.untyped_data(), l.untyped_data() + i * w, w);
  return s;
}

void CopyElement(Literal& dst, int64_t i, const Literal& src, int64_t j) {
  int w = PrimitiveByteWidth(dst.shape().element_type());
  std::memcpy(dst.untyped_data() + i * w, src.untyped_data() + j * w, w);
}

Literal Filled(const Shape& shape, const Literal& value) {
  Literal out(shape);
  int w = PrimitiveByteWidth(shape.element_type());
  uint8_t* data = out.untyped_data();
  for (int64_t i = 0, count = out.element_count(); i < count; ++i) std::memcpy(data + i * w, value.untyped_data(), w);
  return out;
}

std::vector<double> ToDoubles(const Literal& l) {
  std::vector<double> out(l.element_count());
  switch (l.shape().element_type()) {
    case PrimitiveType::kF32: {
      const float* p = l.data<float>().data();
      for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
      return out;
    }
    case PrimitiveType::kF64:
      std::memcpy(out.data(), l.untyped_data(), out.size() * sizeof(double));
      return out;
    default:
      for (size_t i = 0; i < out.size(); ++i) out[i] = l.GetDouble(static_cast<int64_t>(i));
      return out;
  }
}

void FromDoubles(absl::Span<const double> values, Literal& out) {
  switch (out.shape().element_type()) {
    case PrimitiveType::kF32: {
      float* p = out.data<float>().data();
      for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
      return;
    }
    case PrimitiveType::kF64:
      std::memcpy(out.untyped_data(), values.data(), values.size() * sizeof(double));
      return;
    default:
      for (size_t i = 0; i < values.size(); ++i) out.SetDouble(static_cast<int64_t>(i), values[i]);
  }
}

absl::Status Accumulate(EvalContext& ctx, const std::optional<SimpleBinary>& simple, const HloComputation* reducer,
                        absl::Span<Literal* const> accs, int64_t k, absl::Span<const Literal* const> xs, int64_t i) {
  if (simple.has_value() && accs.size() == 1) {
    return simple->swapped
               ? BinaryElement(simple->opcode, simple->direction, simple->type, *xs[0], i, *accs[0], k, *accs[0], k)
               : BinaryElement(simple->opcode, simple->direction, simple->type, *accs[0], k, *xs[0], i, *accs[0], k);
  }
  std::vector<Literal> scalars;
  scalars.reserve(accs.size() + xs.size());
  for (Literal* a : accs) scalars.push_back(Element(*a, k));
  for (const Literal* x : xs) scalars.push_back(Element(*x, i));
  std::vector<const Literal*> ptrs;
  for (const Literal& l : scalars) ptrs.push_back(&l);
  ASSIGN_OR_RETURN(Literal r, ctx.Call(*reducer, ptrs));
  if (accs.size() == 1 && !r.shape().IsTuple()) {
    CopyElement(*accs[0], k, r, 0);
  } else {
    for (size_t n = 0; n < accs.size(); ++n) CopyElement(*accs[n], k, r.tuple_elements()[n], 0);
  }
  return absl::OkStatus();
}

}  // namespace passlab::eval
