// A program's real arguments (and the outputs it should produce) from files:
// the one way `passlab eval`, `run`, `ablate` and the GUI read them.
//
// A directory of .npy files is matched to the entry computation's
// parameters by number. The number of a file is the first run of decimal
// digits in its name: `0.npy`, `1.npy`, `arg2.npy`, `param_3.npy`,
// `Arg_4.5.npy` (XLA's parameter names `Arg_<N>.<id>`: parameter 4) all
// work. Files whose names start with "output" are not arguments: they are
// the expected outputs, `output_<i>.npy` for the i-th output leaf (tuples
// flattened depth first), as `passlab eval/run --output-dir` write them, so
// one directory can hold a step's arguments and its results. Every
// parameter needs exactly one file; a missing file, two files for one
// number, a number beyond the parameters, or a shape or dtype that does not
// fit the parameter is an error naming the file and the parameter. Types
// NumPy lacks travel as NpyDescr() says (bf16 and f8 as float32, 4-bit
// integers as int8/uint8) and are converted back here.
#ifndef PASSLAB_CORE_EVAL_ARGUMENTS_H_
#define PASSLAB_CORE_EVAL_ARGUMENTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/literal.h"

namespace passlab {

// `value` (read from `source`) as an argument of `computation`'s parameter
// `number`: same dimensions, the parameter's element type (converted only
// where NumPy has no dtype for it) and layout.
absl::StatusOr<Literal> FitArgument(Literal value, const HloComputation& computation, int64_t number,
                                    const std::string& source);

// One .npy file per parameter, in order (`passlab eval --input`).
absl::StatusOr<std::vector<Literal>> ReadArgumentFiles(const HloComputation& computation,
                                                       const std::vector<std::string>& files);

// The .npy files of `dir` matched to the parameters by number (above).
absl::StatusOr<std::vector<Literal>> ReadArgumentDirectory(const HloComputation& computation, const std::string& dir);

// The expected outputs `dir/output_<i>.npy`, one per array leaf of
// `result_shape` (depth first), each checked against its leaf's shape.
absl::StatusOr<std::vector<Literal>> ReadExpectedOutputs(const Shape& result_shape, const std::string& dir);

// Where a module's arguments come from: a directory (`--args DIR`), else
// the arguments a file brought with it (an HLO snapshot's), else seeded
// random values. Returns the arguments and says which in `origin`.
struct ArgumentSource {
  std::string dir;                   // --args DIR
  const std::vector<Literal>* embedded = nullptr;  // e.g. an HloSnapshot's arguments
  uint64_t seed = 1;
};
absl::StatusOr<std::vector<Literal>> ResolveArguments(const HloComputation& computation,
                                                      const ArgumentSource& source, std::string* origin = nullptr);

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_ARGUMENTS_H_
