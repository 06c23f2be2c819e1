#include "core/runtime/library_threads.h"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <thread>

#include "gtest/gtest.h"

namespace passlab {
namespace {

// OpenMP's per-thread setting, read the way library_threads.cc sets it.
int OpenMpMaxThreads() {
  using GetFn = int (*)();
  auto get = reinterpret_cast<GetFn>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return get != nullptr ? get() : -1;
}

TEST(LibraryThreadsTest, CapsOpenBlasAndOpenMpOnEveryThread) {
  SetLibraryCallThreads(1);
  EXPECT_EQ(LibraryCallThreads(), 1);
  EXPECT_EQ(openblas_get_num_threads(), 1);
  if (OpenMpMaxThreads() < 0) GTEST_SKIP() << "no OpenMP runtime loaded";
  EXPECT_EQ(OpenMpMaxThreads(), 1);
  // A thread started later gets OpenMP's default until it applies the cap.
  int seen = -1;
  std::thread([&] {
    ApplyLibraryCallThreads();
    seen = OpenMpMaxThreads();
  }).join();
  EXPECT_EQ(seen, 1);
}

TEST(LibraryThreadsTest, ZeroMeansEveryCore) {
  SetLibraryCallThreads(0);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(LibraryCallThreads(), cores);
  EXPECT_EQ(openblas_get_num_threads(), cores);
}

}  // namespace
}  // namespace passlab
