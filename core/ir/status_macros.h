// Status plumbing on abseil's Status / StatusOr, as XLA's TF_RETURN_IF_ERROR
// (xla/tsl/platform/errors.h) and TF_ASSIGN_OR_RETURN
// (xla/tsl/platform/statusor.h):
//
//   RETURN_IF_ERROR(CheckPlainLayout(shape));
//   ASSIGN_OR_RETURN(std::unique_ptr<Program> p, Program::Build(c, {}, kernels));
//   ASSIGN_OR_RETURN(p->assignment_, BufferAssignment::Run(c, options));
//
// RETURN_IF_ERROR(expr) returns expr's Status from the enclosing function
// when it is not OK. ASSIGN_OR_RETURN(lhs, expr) evaluates the StatusOr
// `expr` once, returns its Status when not OK, and otherwise moves its value
// into `lhs` (a declaration or an existing lvalue). Both work in functions
// returning absl::Status or any absl::StatusOr<T>. `lhs` must not contain an
// unparenthesised comma (a structured binding or a template with two
// arguments: declare the variable first).
#ifndef PASSLAB_CORE_IR_STATUS_MACROS_H_
#define PASSLAB_CORE_IR_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define RETURN_IF_ERROR(expr)                                                            \
  do {                                                                                   \
    if (::absl::Status passlab_status_ = (expr); !passlab_status_.ok()) return passlab_status_; \
  } while (false)

#define PASSLAB_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define PASSLAB_STATUS_MACROS_CONCAT_(a, b) PASSLAB_STATUS_MACROS_CONCAT_INNER_(a, b)

#define ASSIGN_OR_RETURN(lhs, expr) \
  PASSLAB_ASSIGN_OR_RETURN_IMPL_(PASSLAB_STATUS_MACROS_CONCAT_(passlab_statusor_, __LINE__), lhs, expr)

#define PASSLAB_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = *std::move(statusor)

#endif  // PASSLAB_CORE_IR_STATUS_MACROS_H_
