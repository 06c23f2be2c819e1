// The computation partitioner (seed 000): splits a fused computation into
// subgraphs that can each be emitted as one function without evaluating any
// instruction more than once per element.
//
// Rule: an instruction is emitted inside its user's function when it has
// one user, or when all its users are in the same subgraph and index it the
// same way (their indexing maps to it, see indexing_map.h, are one and the
// same map). Otherwise it roots its own subgraph function,
// `(buffers..., index per dim) -> element(s)`, which callers invoke at the
// index they need. Parameters and constants belong to no subgraph: they are
// read from their buffers where used. Output roots always root a subgraph.
// For log -> {transpose, add} this gives the subgraphs {add, transpose} and
// {log}: transpose reads log at a permuted index, add at the identity.
#ifndef PASSLAB_CORE_CODEGEN_COMPUTATION_PARTITIONER_H_
#define PASSLAB_CORE_CODEGEN_COMPUTATION_PARTITIONER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace passlab {

class HloComputation;
class HloInstruction;

struct Subgraph {
  std::string name;                                 // function name
  const HloInstruction* root = nullptr;
  std::vector<const HloInstruction*> instructions;  // post order, root last
};

class PartitionedComputation {
 public:
  // `roots` are the output leaves (they always root a subgraph).
  PartitionedComputation(const HloComputation& computation,
                         const std::vector<const HloInstruction*>& roots);

  const std::vector<Subgraph>& subgraphs() const { return subgraphs_; }
  // The subgraph an instruction is emitted in (nullptr for parameters and
  // constants).
  const Subgraph* SubgraphOf(const HloInstruction* instruction) const;
  // Whether the instruction roots a subgraph.
  bool IsSubgraphRoot(const HloInstruction* instruction) const;

 private:
  std::vector<Subgraph> subgraphs_;
  absl::flat_hash_map<const HloInstruction*, int> subgraph_of_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_COMPUTATION_PARTITIONER_H_
