// The persistent compiled-kernel cache (persistent_kernel_cache.h) and the
// code generators' use of it. XLA keeps the same kind of cache on disk
// (xla/service/gpu/autotuning/autotuner_util.cc's per-fusion cache directory,
// jax's persistent compilation cache): keyed by everything the code depends
// on, written through a temporary and a rename, a bad entry ignored.
#include "core/codegen/persistent_kernel_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test (removed afterwards).
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "passlab-kcache-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    path_ = mkdtemp(buf.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<fs::path> Entries(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".kernel") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

constexpr const char* kSoftplus = R"(HloModule m
softplus {
  x = f32[7,129] parameter(0)
  y = f32[7,129] parameter(1)
  e = f32[7,129] exponential(x)
  one = f32[] constant(1)
  b = f32[7,129] broadcast(one), dimensions={}
  s = f32[7,129] add(e, b)
  l = f32[7,129] log(s)
  ROOT r = f32[7,129] multiply(l, y)
}
ENTRY main {
  p0 = f32[7,129] parameter(0)
  p1 = f32[7,129] parameter(1)
  ROOT fusion = f32[7,129] fusion(p0, p1), kind=kLoop, calls=softplus
})";

struct Counts {
  int64_t hits = CpuKernelCompiler::PersistentCacheHits();
  int64_t misses = CpuKernelCompiler::PersistentCacheMisses();
  int64_t Hits() const { return CpuKernelCompiler::PersistentCacheHits() - hits; }
  int64_t Misses() const { return CpuKernelCompiler::PersistentCacheMisses() - misses; }
};

// Compiles the root of `text` with a fresh compiler (the in-process cache
// off, so only the persistent one can help) and runs it on seeded inputs.
std::vector<Literal> CompileAndRun(const std::string& text, CpuCompileOptions options) {
  options.use_cache = false;
  auto m = ParseHloModule(text, "test");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  const HloInstruction& root = *(*m)->entry_computation()->root_instruction();
  CpuKernelCompiler compiler(options);
  auto kernel = compiler.Compile(root);
  EXPECT_TRUE(kernel.ok()) << kernel.status().message();
  if (!kernel.ok()) return {};
  EXPECT_EQ((*kernel)->name(), "fusion");
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
  auto out = testing::RunKernel(**kernel, root, args);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? std::move(*out) : std::vector<Literal>{};
}

void ExpectSameBits(const std::vector<Literal>& a, const std::vector<Literal>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape().byte_size(), b[i].shape().byte_size());
    EXPECT_EQ(std::memcmp(a[i].untyped_data(), b[i].untyped_data(), a[i].shape().byte_size()), 0) << "output " << i;
  }
}

TEST(PersistentKernelCacheTest, CpuKernelFromTheCacheComputesTheSameValues) {
  TempDir dir;
  CpuCompileOptions options;
  options.persistent_cache_dir = dir.path();
  Counts first;
  std::vector<Literal> compiled = CompileAndRun(kSoftplus, options);
  EXPECT_EQ(first.Misses(), 1);
  EXPECT_EQ(first.Hits(), 0);
  ASSERT_EQ(Entries(dir.path()).size(), 1u);

  Counts second;
  std::vector<Literal> loaded = CompileAndRun(kSoftplus, options);
  EXPECT_EQ(second.Hits(), 1);
  EXPECT_EQ(second.Misses(), 0);
  ExpectSameBits(compiled, loaded);
  // And against the evaluator, through a third, cached, compile.
  testing::ExpectMatchesEvaluator(kSoftplus, {1e-5, 1e-5, 4}, options);
}

TEST(PersistentKernelCacheTest, IdenticalKernelsOfOtherModulesShareAnEntry) {
  TempDir dir;
  CpuCompileOptions options;
  options.persistent_cache_dir = dir.path();
  CompileAndRun(kSoftplus, options);
  // The same code under other names: a hit.
  std::string renamed = kSoftplus;
  for (auto [from, to] : {std::pair<std::string, std::string>{"softplus", "other_computation"}, {"p0", "arg_a"}}) {
    for (size_t pos = renamed.find(from); pos != std::string::npos; pos = renamed.find(from, pos + to.size())) {
      renamed.replace(pos, from.size(), to);
    }
  }
  Counts counts;
  CompileAndRun(renamed, options);
  EXPECT_EQ(counts.Hits(), 1);
  EXPECT_EQ(Entries(dir.path()).size(), 1u);
}

TEST(PersistentKernelCacheTest, OtherEmitterOptionsMiss) {
  TempDir dir;
  CpuCompileOptions options;
  options.persistent_cache_dir = dir.path();
  std::vector<Literal> base = CompileAndRun(kSoftplus, options);
  for (int variant = 0; variant < 3; ++variant) {
    CpuCompileOptions other = options;
    if (variant == 0) other.disabled_passes = {"cse"};
    if (variant == 1) other.unroll = 4;
    if (variant == 2) other.llvm_opt_level = 1;
    Counts counts;
    std::vector<Literal> out = CompileAndRun(kSoftplus, other);
    EXPECT_EQ(counts.Misses(), 1) << "variant " << variant;
    EXPECT_EQ(counts.Hits(), 0) << "variant " << variant;
    ASSERT_EQ(out.size(), base.size());
  }
  EXPECT_EQ(Entries(dir.path()).size(), 4u);
  // Threads are a run-time setting: the same object code.
  CpuCompileOptions threads = options;
  threads.num_threads = 1;
  Counts counts;
  CompileAndRun(kSoftplus, threads);
  EXPECT_EQ(counts.Hits(), 1);
}

TEST(PersistentKernelCacheTest, CorruptEntriesAreMissesWithAWarning) {
  TempDir dir;
  CpuCompileOptions options;
  options.persistent_cache_dir = dir.path();
  std::vector<Literal> base = CompileAndRun(kSoftplus, options);
  auto entries = Entries(dir.path());
  ASSERT_EQ(entries.size(), 1u);
  const fs::path entry = entries[0];
  std::string bytes;
  {
    std::ifstream in(entry, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& text) {
    std::ofstream out(entry, std::ios::binary | std::ios::trunc);
    out << text;
  };
  absl::StatusOr<PersistentKernelCache*> cache = PersistentKernelCache::Open(dir.path());
  ASSERT_TRUE(cache.ok());
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"flipped byte", [&] {
         std::string b = bytes;
         b[b.size() / 2] ^= 0x5a;
         return b;
       }()},
      {"truncated", bytes.substr(0, bytes.size() - 100)},
      {"empty", ""},
      {"not an entry", "hello\n"},
  };
  for (const auto& [what, text] : damages) {
    write(text);
    const int64_t corrupt = (*cache)->corrupt_entries();
    Counts counts;
    ::testing::internal::CaptureStderr();
    std::vector<Literal> out = CompileAndRun(kSoftplus, options);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(counts.Misses(), 1) << what;
    ExpectSameBits(base, out);
    EXPECT_EQ((*cache)->corrupt_entries() - corrupt, 1) << what;
    EXPECT_NE(err.find("kernel cache: ignoring"), std::string::npos) << what << ": " << err;
  }
  // The compile rewrote the entry: a hit again.
  Counts counts;
  CompileAndRun(kSoftplus, options);
  EXPECT_EQ(counts.Hits(), 1);
}

TEST(PersistentKernelCacheTest, StoreAndLoadRoundTripAndCheckTheKey) {
  TempDir dir;
  auto cache = PersistentKernelCache::Open(dir.path());
  ASSERT_TRUE(cache.ok()) << cache.status().message();
  EXPECT_FALSE((*cache)->Load("k1").has_value());
  ASSERT_TRUE((*cache)->Store("k1", std::string("pay\0load", 8)).ok());
  ASSERT_TRUE((*cache)->Store("k2", "").ok());
  EXPECT_EQ((*cache)->Load("k1"), std::string("pay\0load", 8));
  EXPECT_EQ((*cache)->Load("k2"), "");
  // An entry holding another key (as after a hash collision) is not served.
  fs::copy_file((*cache)->EntryPath("k1"), (*cache)->EntryPath("k3"));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE((*cache)->Load("k3").has_value());
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("another key"), std::string::npos);
  // The same directory is one cache object per process.
  EXPECT_EQ(*PersistentKernelCache::Open(dir.path() + "/"), *cache);
}

TEST(PersistentKernelCacheTest, AFileInsteadOfADirectoryIsAnError) {
  TempDir dir;
  std::string file = dir.path() + "/file";
  std::ofstream(file) << "x";
  auto cache = PersistentKernelCache::Open(file);
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find(file), std::string::npos) << cache.status().message();
  CpuCompileOptions options;
  options.persistent_cache_dir = file;
  options.use_cache = false;
  auto m = ParseHloModule(kSoftplus, "test");
  ASSERT_TRUE(m.ok());
  CpuKernelCompiler compiler(options);
  auto kernel = compiler.Compile(*(*m)->entry_computation()->root_instruction());
  EXPECT_FALSE(kernel.ok());
}

TEST(PersistentKernelCacheTest, EvictsTheLeastRecentlyUsedPastTheCap) {
  TempDir dir;
  auto cache = PersistentKernelCache::Open(dir.path());
  ASSERT_TRUE(cache.ok());
  const std::string payload(1000, 'x');
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*cache)->Store("key" + std::to_string(i), payload).ok());
  // Entry times: key0 oldest ... key3 newest; then key0 is used.
  for (int i = 0; i < 4; ++i) {
    fs::last_write_time((*cache)->EntryPath("key" + std::to_string(i)),
                        fs::file_time_type::clock::now() - std::chrono::hours(10 - i));
  }
  ASSERT_TRUE((*cache)->Load("key0").has_value());
  const int64_t entry_bytes = static_cast<int64_t>(fs::file_size((*cache)->EntryPath("key0")));
  (*cache)->set_max_bytes(entry_bytes * 4);  // 90% of it holds 3
  ASSERT_TRUE((*cache)->Store("key4", payload).ok());  // 5 entries: past the cap
  EXPECT_EQ(Entries(dir.path()).size(), 3u);
  EXPECT_TRUE((*cache)->Load("key0").has_value());  // recently used
  EXPECT_TRUE((*cache)->Load("key4").has_value());
  EXPECT_TRUE((*cache)->Load("key3").has_value());
  EXPECT_FALSE((*cache)->Load("key1").has_value());
  EXPECT_FALSE((*cache)->Load("key2").has_value());
  (*cache)->set_max_bytes(PersistentKernelCache::kDefaultMaxBytes);
}

TEST(PersistentKernelCacheTest, ConcurrentWritersLeaveAValidCache) {
  TempDir dir;
  // Four processes write the same 20 keys 25 times each, with payloads of
  // different sizes per writer, while reading them back.
  constexpr int kWriters = 4, kKeys = 20, kRounds = 25;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto cache = PersistentKernelCache::Open(dir.path());
      int bad = 0;
      for (int r = 0; r < kRounds; ++r) {
        for (int k = 0; k < kKeys; ++k) {
          std::string key = "key" + std::to_string(k);
          if (!cache.ok() || !(*cache)->Store(key, std::string(100 + 37 * w + k, 'a' + w)).ok()) ++bad;
          std::optional<std::string> back = (*cache)->Load(key);
          if (!back.has_value() || back->size() < 100) ++bad;
        }
      }
      _exit(bad == 0 && (*cache)->corrupt_entries() == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto cache = PersistentKernelCache::Open(dir.path());
  ASSERT_TRUE(cache.ok());
  for (int k = 0; k < kKeys; ++k) {
    std::optional<std::string> value = (*cache)->Load("key" + std::to_string(k));
    ASSERT_TRUE(value.has_value()) << k;
    // One writer's whole payload.
    const char c = (*value)[0];
    EXPECT_EQ(value->size(), static_cast<size_t>(100 + 37 * (c - 'a') + k));
    EXPECT_EQ(value->find_first_not_of(c), std::string::npos);
  }
  EXPECT_EQ((*cache)->corrupt_entries(), 0);
  // No temporaries left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, kKeys);
}

TEST(PersistentKernelCacheTest, RecordReaderRefusesShortInput) {
  CacheRecordWriter w;
  w.Int(-5);
  w.Bytes("abc");
  std::string bytes = std::move(w).Finish();
  CacheRecordReader r(bytes);
  int64_t v = 0;
  std::string s;
  ASSERT_TRUE(r.Int(&v) && r.Bytes(&s));
  EXPECT_EQ(v, -5);
  EXPECT_EQ(s, "abc");
  EXPECT_TRUE(r.AtEnd());
  CacheRecordReader short_reader(std::string_view(bytes).substr(0, bytes.size() - 1));
  EXPECT_TRUE(short_reader.Int(&v));
  EXPECT_FALSE(short_reader.Bytes(&s));
}

TEST(PersistentKernelCacheTest, GpuKernelFromTheCacheIsTheSameAndTargetsMiss) {
  TempDir dir;
  GpuCompileOptions options;
  options.persistent_cache_dir = dir.path();
  options.use_cache = false;
  auto m = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  ROOT x = f32[1000] subtract(a, b)
})", "t");
  ASSERT_TRUE(m.ok());
  const HloInstruction& root = *(*m)->entry_computation()->root_instruction();
  const int64_t hits = GpuKernelCompiler::PersistentCacheHits(), misses = GpuKernelCompiler::PersistentCacheMisses();
  auto first = GpuKernelCompiler(options).Compile(root);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = GpuKernelCompiler(options).Compile(root);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(GpuKernelCompiler::PersistentCacheMisses() - misses, 1);
  EXPECT_EQ(GpuKernelCompiler::PersistentCacheHits() - hits, 1);
  EXPECT_EQ(second->ptx, first->ptx);
  EXPECT_EQ(second->entry, first->entry);
  EXPECT_EQ(second->name, "x");
  EXPECT_EQ(second->launch.grid_x, first->launch.grid_x);
  EXPECT_EQ(second->launch.block_x, first->launch.block_x);
  EXPECT_EQ(second->num_buffers, 3);
  EXPECT_EQ(second->bytes_read, first->bytes_read);
  // Another sm version is another kernel.
  GpuCompileOptions older = options;
  older.target = "sm_80";
  auto third = GpuKernelCompiler(older).Compile(root);
  ASSERT_TRUE(third.ok()) << third.status().message();
  EXPECT_EQ(GpuKernelCompiler::PersistentCacheMisses() - misses, 2);
  EXPECT_NE(third->ptx.find("sm_80"), std::string::npos);
  EXPECT_EQ(Entries(dir.path()).size(), 2u);
}

TEST(PersistentKernelCacheTest, CompilerVersionNamesTheBuildAndLlvm) {
  const std::string& version = KernelCompilerVersion();
  EXPECT_EQ(version.rfind("passlab-build ", 0), 0u) << version;
  EXPECT_NE(version.find(" llvm "), std::string::npos) << version;
  EXPECT_FALSE(KernelHostTargetKey().empty());
}

}  // namespace
}  // namespace passlab
