#include "core/ir/literal_util.h"

namespace passlab {

void FlattenLeaves(const Literal& literal, std::vector<const Literal*>& leaves) {
  if (!literal.shape().IsTuple()) {
    leaves.push_back(&literal);
    return;
  }
  for (const Literal& e : literal.tuple_elements()) FlattenLeaves(e, leaves);
}

}  // namespace passlab
