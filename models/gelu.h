// Seed 000's GELU module: one kLoop fusion computation `gelu` with the tanh
// approximation x * 0.5 * (1 + tanh(0.79785 * (x + 0.044708 x^3))) over
// bf16[6, 512, 4096], called from the entry. Built op for op with the same
// names as test/hlo/gelu.hlo, so that (without metadata) it prints
// identically. The shape is [batch, seq_len, width] and may be changed.
#ifndef PASSLAB_MODELS_GELU_H_
#define PASSLAB_MODELS_GELU_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

struct GeluConfig {
  int64_t batch = 6;
  int64_t seq_len = 512;
  int64_t width = 4096;
  PrimitiveType dtype = PrimitiveType::kBF16;
};

absl::StatusOr<std::unique_ptr<HloModule>> BuildGelu(const GeluConfig& config);

}  // namespace passlab

#endif  // PASSLAB_MODELS_GELU_H_
