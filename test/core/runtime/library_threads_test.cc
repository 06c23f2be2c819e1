#include "core/runtime/library_threads.h"

#include <cblas.h>
#include <dlfcn.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace passlab {
namespace {

// OpenMP's per-thread setting, read the way library_threads.cc sets it.
int OpenMpMaxThreads() {
  using GetFn = int (*)();
  auto get = reinterpret_cast<GetFn>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return get != nullptr ? get() : -1;
}

// OpenBLAS 0.3.21 does not know CPUs newer than it (Emerald Rapids) and
// falls back to its SSE3 "Prescott" kernels, 4x slower; before main passlab
// chooses the family the CPU's features allow. Whatever the machine, a CPU
// with AVX2 must not be left on Prescott, and the choice shows in the name.
TEST(LibraryThreadsTest, OpenBlasIsNotLeftOnItsGenericKernels) {
  std::string core = OpenBlasCore();
  if (core.empty()) GTEST_SKIP() << "no OpenBLAS";
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) GTEST_SKIP() << "OPENBLAS_CORETYPE is set";
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no AVX2";
  EXPECT_NE(core, "Prescott");
  if (core.find("chosen by passlab") != std::string::npos) {
    EXPECT_TRUE(core.rfind("SkylakeX", 0) == 0 || core.rfind("Haswell", 0) == 0) << core;
  }
  // The chosen kernels compute: a small sgemm against the plain sum.
  std::vector<float> a(64 * 48), b(48 * 32), c(64 * 32, 0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 64, 32, 48, 1, a.data(), 48, b.data(), 32, 0, c.data(), 32);
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 32; ++j) {
      float want = 0;
      for (int k = 0; k < 48; ++k) want += a[i * 48 + k] * b[k * 32 + j];
      ASSERT_EQ(c[i * 32 + j], want) << i << "," << j;
    }
  }
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

// Threads of this process other than the caller that are running or
// runnable ("R" in /proc/self/task/<tid>/stat).
int OtherRunningThreads() {
  int running = 0;
  const std::string self = std::to_string(::gettid());
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (task.path().filename() == self) continue;
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // "tid (name) S ...": the state follows the last ')'.
    size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'R') ++running;
  }
  return running;
}

// OpenBLAS's idle threads would spin for about 0.1 s after each call,
// taking the cores the next convolution's OpenMP threads need. Before main,
// library_threads.cc has them sleep as soon as they are idle.
TEST(LibraryThreadsTest, OpenBlasThreadsSleepWhenIdle) {
  const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  ASSERT_NE(timeout, nullptr) << "library_threads.cc did not set OPENBLAS_THREAD_TIMEOUT";
  if (std::string(timeout) != "4") GTEST_SKIP() << "OPENBLAS_THREAD_TIMEOUT=" << timeout << " was set outside";
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: OpenBLAS runs no threads of its own";
  SetLibraryCallThreads(0);
  const int n = 512;
  std::vector<float> a(n * n, 1.0f), b(n * n, 2.0f), c(n * n, 0.0f);
  // The thread server was restarted before main: it still computes, on
  // its threads.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  EXPECT_EQ(c[0], 2.0f * n);
  EXPECT_EQ(c[n * n - 1], 2.0f * n);
  // Idle, they sleep within microseconds; spinning, they would stay
  // running for about 0.1 s. Polled for 60 ms, so that a thread merely
  // waiting for a core on a loaded machine is not taken for a spinner.
  const auto done = std::chrono::steady_clock::now();
  int running = OtherRunningThreads();
  while (running > 0 && std::chrono::steady_clock::now() - done < std::chrono::milliseconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    running = OtherRunningThreads();
  }
  EXPECT_EQ(running, 0) << "a thread still spins 60 ms after the gemm";
}

}  // namespace
}  // namespace passlab
