// Test helpers: run a compiled kernel on random inputs laid out as their
// shapes' layouts say, and compare with the evaluator.
#ifndef PASSLAB_TEST_CORE_CODEGEN_CODEGEN_TEST_UTIL_H_
#define PASSLAB_TEST_CORE_CODEGEN_CODEGEN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
inline std::string PrintModuleForTest(const HloModule& m) { return PrintModule(m); }
}  // namespace passlab

namespace passlab::testing {

// Physical offset of each logical (row-major) element of `shape`.
inline std::vector<int64_t> PhysicalOffsets(const Shape& shape) {
  std::vector<int64_t> mtm;
  if (shape.has_layout()) mtm = shape.layout().minor_to_major();
  if (static_cast<int64_t>(mtm.size()) != shape.rank()) {
    mtm.clear();
    for (int64_t d = shape.rank() - 1; d >= 0; --d) mtm.push_back(d);
  }
  std::vector<int64_t> strides(shape.rank(), 1);
  int64_t s = 1;
  for (int64_t d : mtm) {
    strides[d] = s;
    s *= shape.dimensions(d);
  }
  int64_t n = shape.element_count();
  std::vector<int64_t> out(n);
  std::vector<int64_t> idx(shape.rank(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) off += idx[d] * strides[d];
    out[i] = off;
    for (int64_t d = shape.rank() - 1; d >= 0; --d) {
      if (++idx[d] < shape.dimensions(d)) break;
      idx[d] = 0;
    }
  }
  return out;
}

inline std::vector<uint8_t> ToPhysical(const Literal& lit, const Shape& shape) {
  int w = PrimitiveByteWidth(shape.element_type());
  std::vector<uint8_t> buf(std::max<int64_t>(1, shape.element_count() * w));
  std::vector<int64_t> offs = PhysicalOffsets(shape);
  for (size_t i = 0; i < offs.size(); ++i) std::memcpy(&buf[offs[i] * w], lit.untyped_data() + i * w, w);
  return buf;
}

inline Literal FromPhysical(const std::vector<uint8_t>& buf, const Shape& shape) {
  Literal lit(shape);
  int w = PrimitiveByteWidth(shape.element_type());
  std::vector<int64_t> offs = PhysicalOffsets(shape);
  for (size_t i = 0; i < offs.size(); ++i) std::memcpy(lit.untyped_data() + i * w, &buf[offs[i] * w], w);
  return lit;
}

inline void FlattenShape(const Shape& s, std::vector<Shape>& out) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) FlattenShape(e, out);
  } else {
    out.push_back(s);
  }
}
inline void FlattenLiteral(const Literal& l, std::vector<const Literal*>& out) {
  if (l.shape().IsTuple()) {
    for (const Literal& e : l.tuple_elements()) FlattenLiteral(e, out);
  } else {
    out.push_back(&l);
  }
}

// Runs the kernel of the entry root (or of the instruction named `name`).
inline absl::StatusOr<std::vector<Literal>> RunKernel(const CompiledKernel& kernel, const HloInstruction& instr,
                                                      const std::vector<Literal>& args) {
  std::vector<std::vector<uint8_t>> storage;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const HloInstruction* operand = instr.operand(i);
    if (operand->opcode() == HloOpcode::kConstant) {
      storage.push_back(ToPhysical(operand->literal(), operand->shape()));
    } else if (operand->opcode() == HloOpcode::kParameter) {
      storage.push_back(ToPhysical(args[operand->parameter_number()], operand->shape()));
    } else {
      return absl::InvalidArgumentError("test kernels take parameters and constants only");
    }
  }
  std::vector<Shape> outs;
  FlattenShape(instr.shape(), outs);
  for (const Shape& s : outs) {
    storage.emplace_back(std::max<int64_t>(1, s.element_count() * PrimitiveByteWidth(s.element_type())), 0xAB);
  }
  std::vector<void*> ptrs;
  for (auto& s : storage) ptrs.push_back(s.data());
  kernel.Run(ptrs);
  std::vector<Literal> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    result.push_back(FromPhysical(storage[instr.operand_count() + i], outs[i]));
  }
  return result;
}

// Parses `text`, compiles the entry root, runs it on random inputs (seeded)
// and compares each output leaf with the evaluator.
inline void ExpectMatchesEvaluator(const std::string& text, ErrorSpec spec = {1e-5, 1e-5, 4},
                                   CpuCompileOptions options = {}, EmitterKind* kind = nullptr,
                                   uint64_t seed = 42) {
  auto m = ParseHloModule(text, "test");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction& root = *(*m)->entry_computation()->root_instruction();
  CpuKernelCompiler compiler(options);
  if (std::getenv("PASSLAB_DUMP_MLIR") != nullptr) {
    auto mlir = compiler.EmitMlir(root);
    std::cerr << (mlir.ok() ? *mlir : std::string(mlir.status().message())) << "\n";
  }
  auto kernel = compiler.Compile(root);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  if (kind != nullptr) *kind = (*kernel)->emitter_kind();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), seed);
  HloEvaluator evaluator;
  auto expected = evaluator.Evaluate(**m, args);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  auto actual = RunKernel(**kernel, root, args);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  std::vector<const Literal*> leaves;
  FlattenLiteral(*expected, leaves);
  ASSERT_EQ(leaves.size(), actual->size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    absl::Status s = CompareLiterals(*leaves[i], (*actual)[i], spec);
    EXPECT_TRUE(s.ok()) << "output " << i << ": " << s.message();
  }
}

// Turns "HloModule m\nENTRY e {...}" into a module whose entry calls that
// computation as one kLoop fusion (multi-output when the root is a tuple).
inline std::string WrapInFusion(const std::string& text) {
  auto m = ParseHloModule(text, "wrap");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return text;
  const HloComputation& entry = *(*m)->entry_computation();
  std::string out = text;
  size_t pos = out.find("ENTRY");
  out.replace(pos, 5, "");
  size_t brace = out.find('{', pos);
  out.replace(pos, brace - pos, " fused_computation ");
  out += "\nENTRY main {\n";
  std::string args;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    out += "  p" + std::to_string(i) + " = " + entry.parameter_instruction(i)->shape().ToString() + " parameter(" +
           std::to_string(i) + ")\n";
    args += (i ? ", p" : "p") + std::to_string(i);
  }
  out += "  ROOT fusion = " + entry.root_instruction()->shape().ToString() + " fusion(" + args +
         "), kind=kLoop, calls=fused_computation\n}\n";
  return out;
}

inline void ExpectFusedMatchesEvaluator(const std::string& text, ErrorSpec spec = {1e-5, 1e-5, 4},
                                        CpuCompileOptions options = {}, EmitterKind* kind = nullptr) {
  ExpectMatchesEvaluator(WrapInFusion(text), spec, options, kind);
}

}  // namespace passlab::testing

#endif  // PASSLAB_TEST_CORE_CODEGEN_CODEGEN_TEST_UTIL_H_
