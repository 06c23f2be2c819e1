#include "passes/libcall/cublas_pad_for_gemms.h"

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/pass/hlo_rewrite_visitor.h"

namespace passlab {
namespace {

// [b.., M, K] x [b.., K, N] -> [b.., M, N] with batch dims 0..rank-3.
bool IsCanonicalDot(const HloInstruction& dot) {
  int64_t rank = dot.shape().rank();
  if (rank < 2 || dot.operand(0)->shape().rank() != rank || dot.operand(1)->shape().rank() != rank) return false;
  const DotDimensionNumbers& d = dot.attrs().dot_dnums;
  std::vector<int64_t> batch;
  for (int64_t i = 0; i < rank - 2; ++i) batch.push_back(i);
  return d.lhs_batch_dimensions == batch && d.rhs_batch_dimensions == batch &&
         d.lhs_contracting_dimensions == std::vector<int64_t>{rank - 1} &&
         d.rhs_contracting_dimensions == std::vector<int64_t>{rank - 2};
}

int64_t RoundUp(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

class PadVisitor : public HloRewriteVisitor {
 public:
  PadVisitor(const CublasPadForGemmsOptions& options, CublasPadForGemms& pass) : options_(options), pass_(pass) {}

  // dot(A, B) => slice(dot(pad(A), pad(B)))
  absl::Status HandleDot(HloInstruction* dot) override {
    PrimitiveType t = options_.datatype;
    if (dot->shape().element_type() != t || dot->operand(0)->shape().element_type() != t ||
        dot->operand(1)->shape().element_type() != t || !IsCanonicalDot(*dot)) {
      return absl::OkStatus();
    }
    HloInstruction* lhs = Padded(dot, dot->mutable_operand(0));
    HloInstruction* rhs = Padded(dot, dot->mutable_operand(1));
    if (lhs == dot->operand(0) && rhs == dot->operand(1)) return absl::OkStatus();
    int64_t rank = dot->shape().rank();
    std::vector<int64_t> dims = dot->shape().dimensions();
    dims[rank - 2] = lhs->shape().dimensions(rank - 2);
    dims[rank - 1] = rhs->shape().dimensions(rank - 1);
    Shape shape(t, dims);
    shape.set_layout(dot->shape().layout());
    HloInstruction* padded = AddInstruction(
        dot, HloInstruction::CreateDot(shape, lhs, rhs, dot->attrs().dot_dnums, dot->attrs().precision_config));
    std::vector<SliceDimension> slice;
    for (int64_t d : dot->shape().dimensions()) slice.push_back({0, d, 1});
    pass_.BumpCounter("padded dot");
    return ReplaceWithNewInstruction(dot, HloInstruction::CreateSlice(dot->shape(), padded, slice));
  }

 private:
  // `operand` with its last two dims padded with zeros (itself when aligned).
  HloInstruction* Padded(HloInstruction* dot, HloInstruction* operand) {
    const Shape& s = operand->shape();
    int64_t rank = s.rank();
    std::vector<int64_t> dims = s.dimensions();
    PaddingConfig config;
    config.dimensions.resize(rank);
    bool pad = false;
    for (int64_t i = rank - 2; i < rank; ++i) {
      dims[i] = RoundUp(s.dimensions(i), options_.pad_to_multiple_of);
      config.dimensions[i].edge_padding_high = dims[i] - s.dimensions(i);
      pad = pad || dims[i] != s.dimensions(i);
    }
    if (!pad) return operand;
    absl::StatusOr<Literal> zero = Literal::Scalar<float>(0).Convert(s.element_type());
    HloInstruction* z = AddInstruction(dot, HloInstruction::CreateConstant(std::move(*zero)));
    Shape shape(s.element_type(), dims);
    shape.set_layout(s.layout());
    return AddInstruction(dot, HloInstruction::CreatePad(shape, operand, z, config));
  }

  const CublasPadForGemmsOptions& options_;
  CublasPadForGemms& pass_;
};

}  // namespace

absl::StatusOr<bool> CublasPadForGemms::RunImpl(HloModule& module, PassRunContext*) {
  if (options_.pad_to_multiple_of <= 1) return false;
  PadVisitor visitor(options_, *this);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
