// How many threads the libraries behind the CPU backend's library calls may
// use: OpenBLAS (gemm calls, its own pthreads) and oneDNN (convolution
// calls, OpenMP). By default both take every core, which is wrong for a
// measurement that asked for one thread: the extra threads spin-wait for a
// core another process holds, and a step's time then wanders by 2-3x.
// OpenBLAS's idle threads are also made to sleep at once instead of
// spinning for 0.1 s after each call (library_threads.cc, before main).
#ifndef PASSLAB_CORE_RUNTIME_LIBRARY_THREADS_H_
#define PASSLAB_CORE_RUNTIME_LIBRARY_THREADS_H_

#include <string>

namespace passlab {

// `threads` as the backend's --threads means it: 0 is every core (the
// libraries' default), n > 0 caps both libraries at n threads. Call it before the first
// library call, on the thread that runs the executable.
void SetLibraryCallThreads(int threads);

// The cap set last (0: never set).
int LibraryCallThreads();

// OpenMP's thread count is a per-thread setting: applies the cap to the
// calling thread if it has not seen it yet. The library-call runners call
// this before running a call, so executables run from any thread obey it.
void ApplyLibraryCallThreads();

// OpenBLAS's kernel family ("SkylakeX", "Haswell", ...; "" without
// OpenBLAS). When OpenBLAS fell back to its generic "Prescott" kernels on a
// CPU it does not know but whose AVX-512 or AVX2 it could use, passlab chose
// the family again before main (library_threads.cc) and says so here.
std::string OpenBlasCore();

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_LIBRARY_THREADS_H_
