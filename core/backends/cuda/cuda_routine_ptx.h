// The PTX of the CUDA runtime's own routine kernels (cuda_routine_ptx.cc),
// loaded by cuda_routine_thunk.cc. No CUDA header needed.
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUDA_ROUTINE_PTX_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUDA_ROUTINE_PTX_H_

namespace passlab {

// sm_75 PTX (ISA 7.0), so every GPU the runtime supports JIT-compiles it.
extern const char kCudaRoutinesPtx[];

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUDA_ROUTINE_PTX_H_
