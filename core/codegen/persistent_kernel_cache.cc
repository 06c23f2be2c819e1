#include "core/codegen/persistent_kernel_cache.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "core/codegen/host_target.h"
#include "core/ir/str_util.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

namespace passlab {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "passlab-kernel-cache 1\n";
constexpr std::string_view kEntrySuffix = ".kernel";
constexpr std::string_view kTempPrefix = ".tmp.";
// A temporary older than this was left by a process that died mid-write.
constexpr auto kStaleTemp = std::chrono::hours(1);

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
bool GetU64(std::string_view& in, uint64_t* v) {
  if (in.size() < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) *v |= uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  in.remove_prefix(8);
  return true;
}

uint64_t Checksum(std::string_view bytes) {
  return llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

std::string Hex(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[bytes[i] >> 4]);
    out.push_back(digits[bytes[i] & 15]);
  }
  return out;
}

void Warn(const std::string& message) { std::fprintf(stderr, "passlab: kernel cache: %s\n", message.c_str()); }

// The GNU build id of the loaded object that holds `address`; "" if none.
std::string BuildIdOf(const void* address) {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(address), ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        bool holds = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s->address >= begin && s->address < begin + ph.p_memsz) holds = true;
        }
        if (!holds) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
          const char* end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const char* name = p + sizeof(ElfW(Nhdr));
            const char* desc = name + ((note->n_namesz + 3) & ~3u);
            if (desc + note->n_descsz > end) break;
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
              s->id = Hex(reinterpret_cast<const uint8_t*>(desc), note->n_descsz);
              return 1;
            }
            p = desc + ((note->n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &search);
  return search.id;
}

}  // namespace

const std::string& KernelCompilerVersion() {
  static const std::string* version = [] {
    std::string id = BuildIdOf(reinterpret_cast<const void*>(&KernelCompilerVersion));
    if (id.empty()) {
      // No build id: the executable's size and modification time stand in.
      struct stat st;
      if (stat("/proc/self/exe", &st) == 0) {
        id = StrCat("exe-", static_cast<int64_t>(st.st_size), "-", static_cast<int64_t>(st.st_mtim.tv_sec), ".",
                    static_cast<int64_t>(st.st_mtim.tv_nsec));
      } else {
        id = "unknown";
      }
    }
    return new std::string(StrCat("passlab-build ", id, " llvm ", DetectHostTarget().llvm_version));
  }();
  return *version;
}

const std::string& KernelHostTargetKey() {
  static const std::string* key = [] {
    HostTarget t = DetectHostTarget();
    std::string features;
    for (const std::string& f : t.features) features += (features.empty() ? "" : ",") + f;
    return new std::string(StrCat(t.triple, " ", t.cpu, " ", features));
  }();
  return *key;
}

absl::StatusOr<PersistentKernelCache*> PersistentKernelCache::Open(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("kernel cache: empty directory name");
  static std::mutex mu;
  static auto* caches = new std::map<std::string, std::unique_ptr<PersistentKernelCache>>();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return absl::InvalidArgumentError(
        StrCat("kernel cache: cannot create directory '", dir, "': ", ec ? ec.message() : "not a directory"));
  }
  std::string canonical = fs::weakly_canonical(dir, ec).string();
  if (ec) canonical = dir;
  std::lock_guard<std::mutex> lock(mu);
  auto& cache = (*caches)[canonical];
  if (cache == nullptr) cache.reset(new PersistentKernelCache(canonical));
  return cache.get();
}

PersistentKernelCache::PersistentKernelCache(std::string dir) : dir_(std::move(dir)) {}

std::string PersistentKernelCache::EntryPath(std::string_view key) const {
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
  return StrCat(dir_, "/", Hex(digest.data(), 16), kEntrySuffix);
}

std::optional<std::string> PersistentKernelCache::Load(std::string_view key) {
  const std::string path = EntryPath(key);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;  // no entry: a plain miss
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) {
      ++corrupt_;
      Warn(StrCat("cannot read '", path, "'; compiling instead"));
      return std::nullopt;
    }
  }
  auto corrupt = [&](std::string_view why) -> std::optional<std::string> {
    ++corrupt_;
    Warn(StrCat("ignoring '", path, "' (", why, "); compiling instead"));
    return std::nullopt;
  };
  std::string_view in = bytes;
  if (in.substr(0, kMagic.size()) != kMagic) return corrupt("not a kernel cache entry");
  in.remove_prefix(kMagic.size());
  uint64_t key_size = 0, payload_size = 0, checksum = 0;
  if (!GetU64(in, &key_size) || !GetU64(in, &payload_size)) return corrupt("truncated");
  if (key_size > in.size() || payload_size > in.size() - key_size || in.size() - key_size - payload_size != 8) {
    return corrupt("truncated");
  }
  std::string_view body = std::string_view(bytes).substr(0, bytes.size() - 8);
  std::string_view tail = std::string_view(bytes).substr(bytes.size() - 8);
  GetU64(tail, &checksum);
  if (Checksum(body) != checksum) return corrupt("checksum mismatch");
  if (in.substr(0, key_size) != key) return corrupt("another key with the same hash");
  // A hit refreshes the entry's time, which eviction reads as its last use.
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return std::string(in.substr(key_size, payload_size));
}

absl::Status PersistentKernelCache::Store(std::string_view key, std::string_view payload) {
  std::string bytes(kMagic);
  PutU64(bytes, key.size());
  PutU64(bytes, payload.size());
  bytes.append(key);
  bytes.append(payload);
  PutU64(bytes, Checksum(bytes));

  static std::atomic<uint64_t> counter{0};
  const std::string path = EntryPath(key);
  const std::string tmp =
      StrCat(dir_, "/", kTempPrefix, static_cast<int64_t>(getpid()), ".",
             static_cast<uint64_t>(std::hash<std::thread::id>()(std::this_thread::get_id()) & 0xffffff), ".",
             counter.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InternalError(StrCat("kernel cache: cannot write '", tmp, "'"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return absl::InternalError(StrCat("kernel cache: cannot rename '", tmp, "' to '", path, "': ", why));
  }
  bool evict = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes_estimate_ < 0) bytes_estimate_ = ScanBytes();  // includes this entry
    else bytes_estimate_ += static_cast<int64_t>(bytes.size());
    evict = bytes_estimate_ > max_bytes_;
  }
  if (evict) Evict();
  return absl::OkStatus();
}

int64_t PersistentKernelCache::ScanBytes() {
  int64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    std::error_code size_ec;
    uintmax_t size = e.file_size(size_ec);
    if (!size_ec && e.path().extension() == kEntrySuffix) total += static_cast<int64_t>(size);
  }
  return total;
}

int64_t PersistentKernelCache::Evict() {
  struct Entry {
    fs::file_time_type time;
    std::string path;
    int64_t bytes;
  };
  std::vector<Entry> entries;
  int64_t total = 0, removed = 0;
  const fs::file_time_type now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    std::error_code entry_ec;
    fs::file_time_type time = e.last_write_time(entry_ec);
    uintmax_t size = e.file_size(entry_ec);
    if (entry_ec) continue;  // removed meanwhile by another process
    const std::string name = e.path().filename().string();
    if (name.rfind(kTempPrefix, 0) == 0) {
      if (now - time > kStaleTemp && fs::remove(e.path(), entry_ec)) ++removed;
      continue;
    }
    if (e.path().extension() != kEntrySuffix) continue;
    entries.push_back({time, e.path().string(), static_cast<int64_t>(size)});
    total += static_cast<int64_t>(size);
  }
  // Oldest first; ties by name, so every process removes the same ones.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : a.path < b.path;
  });
  const int64_t target = max_bytes_ / 10 * 9;
  for (const Entry& e : entries) {
    if (total <= target) break;
    std::error_code remove_ec;
    if (fs::remove(e.path, remove_ec)) ++removed;
    total -= e.bytes;
  }
  std::lock_guard<std::mutex> lock(mu_);
  bytes_estimate_ = total;
  return removed;
}

void CacheRecordWriter::Int(int64_t value) { PutU64(out_, static_cast<uint64_t>(value)); }

void CacheRecordWriter::Bytes(std::string_view bytes) {
  PutU64(out_, bytes.size());
  out_.append(bytes);
}

bool CacheRecordReader::Int(int64_t* value) {
  uint64_t v = 0;
  if (!GetU64(in_, &v)) return false;
  *value = static_cast<int64_t>(v);
  return true;
}

bool CacheRecordReader::Bytes(std::string* bytes) {
  uint64_t size = 0;
  if (!GetU64(in_, &size) || size > in_.size()) return false;
  bytes->assign(in_.substr(0, size));
  in_.remove_prefix(size);
  return true;
}

}  // namespace passlab
