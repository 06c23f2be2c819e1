// A compiled-kernel cache on disk, shared by processes and kept across runs
// (XLA's persistent compilation cache, `--xla_gpu_per_fusion_autotune_cache_dir`
// and jax's compilation cache play this part there). The code generators
// store what a kernel compiled to — the CPU backend its object code and loop
// nests, the GPU backend its PTX and launch dimensions — under a key that
// holds everything the code depends on: the kernel's HLO (KernelCacheKey),
// the emitter options, the target and the compiler's version
// (KernelCompilerVersion). A sweep's worker processes then compile each
// kernel once between them, and a later sweep of the same model not at all.
//
// One file per entry, "<hex of the key's SHA-256>.kernel" in the directory:
// a magic line, the key, the payload and an xxh3 checksum of all of it. A
// writer writes a temporary file of its own and renames it over the entry,
// so readers see no entry or a whole one, and concurrent writers of one key
// (two workers compiling the same kernel) leave one whole entry. An entry
// that is truncated, fails its checksum or holds another key is a miss with
// a warning, never an error. Past `max_bytes`, the entries least recently
// used (modification time, which a hit refreshes) are removed.
#ifndef PASSLAB_CORE_CODEGEN_PERSISTENT_KERNEL_CACHE_H_
#define PASSLAB_CORE_CODEGEN_PERSISTENT_KERNEL_CACHE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace passlab {

class PersistentKernelCache {
 public:
  static constexpr int64_t kDefaultMaxBytes = int64_t{2} << 30;

  // The process's cache of `dir` (created when missing; one object per
  // directory, shared by every compiler of the process).
  static absl::StatusOr<PersistentKernelCache*> Open(const std::string& dir);

  // The payload stored under `key`; nullopt when there is none, or when the
  // entry is unreadable, truncated, corrupt or another key's (then with a
  // warning on stderr, counted in corrupt_entries()).
  std::optional<std::string> Load(std::string_view key);

  // Stores `payload` under `key` (atomically, see above); then evicts when
  // the directory has grown past max_bytes().
  absl::Status Store(std::string_view key, std::string_view payload);

  // Removes the least recently used entries (and stale temporaries) until
  // the entries take at most 90% of max_bytes(). Returns the number removed.
  int64_t Evict();

  void set_max_bytes(int64_t bytes) { max_bytes_ = bytes; }
  int64_t max_bytes() const { return max_bytes_; }
  const std::string& dir() const { return dir_; }
  int64_t corrupt_entries() const { return corrupt_.load(); }

  // The entry file's path for `key`.
  std::string EntryPath(std::string_view key) const;

 private:
  explicit PersistentKernelCache(std::string dir);
  int64_t ScanBytes();

  std::string dir_;
  int64_t max_bytes_ = kDefaultMaxBytes;
  std::mutex mu_;
  int64_t bytes_estimate_ = -1;  // entries' bytes as last scanned plus this process's stores
  std::atomic<int64_t> corrupt_{0};
};

// The compiler's identity for cache keys: the GNU build id of the binary
// that holds the code generator (any change to passlab relinks it with a new
// one; the git commit alone misses uncommitted edits), else the binary's
// size and modification time, plus the LLVM version linked in.
const std::string& KernelCompilerVersion();

// The host CPU the CPU backend compiles for: triple, CPU name and features.
const std::string& KernelHostTargetKey();

// A small binary record for cache payloads: integers and byte strings in
// order, read back in the same order (a reader that runs out or finds a
// malformed field reports false rather than reading past the end).
class CacheRecordWriter {
 public:
  void Int(int64_t value);
  void Bytes(std::string_view bytes);
  std::string Finish() && { return std::move(out_); }

 private:
  std::string out_;
};
class CacheRecordReader {
 public:
  explicit CacheRecordReader(std::string_view in) : in_(in) {}
  bool Int(int64_t* value);
  bool Bytes(std::string* bytes);
  bool AtEnd() const { return in_.empty(); }

 private:
  std::string_view in_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_PERSISTENT_KERNEL_CACHE_H_
