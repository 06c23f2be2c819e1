#include "analysis/conformance/conformance.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/conformance/case_table.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/ir/file_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"
#include "core/verify/shape_inference.h"
#include "passes/registry.h"

namespace passlab::conformance {
namespace {

namespace fs = std::filesystem;

// The whole file, inflated when it is gzip (zlib reads plain files as they are).
absl::StatusOr<std::string> ReadMaybeGzip(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return absl::NotFoundError(StrCat(path, ": no such file"));
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(StrCat(path, ": cannot open"));
  std::string out;
  char buf[1 << 16];
  while (true) {
    int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      return absl::DataLossError(StrCat(path, ": ", msg));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  gzclose(f);
  return out;
}

absl::StatusOr<std::string> StringField(const nlohmann::json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return absl::InvalidArgumentError(StrCat(where, ": missing field '", key, "'"));
  if (!it->is_string()) return absl::InvalidArgumentError(StrCat(where, ": field '", key, "' is not a string"));
  return it->get<std::string>();
}

// The specs of a test: its fixture's ("Fixture.") first, then its own.
std::vector<const CaseSpec*> SpecsFor(const std::string& test) {
  std::vector<const CaseSpec*> fixture, own;
  for (const CaseSpec& s : AllCaseSpecs()) {
    if (s.test == test) {
      own.push_back(&s);
    } else if (!s.test.empty() && s.test.back() == '.' && test.rfind(s.test, 0) == 0) {
      fixture.push_back(&s);
    }
  }
  fixture.insert(fixture.end(), own.begin(), own.end());
  return fixture;
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// A scratch directory removed when it goes out of scope.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "passlab-conform-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// FileCheck as XLA's RunFileCheck calls it (--check-prefixes=CHECK
// --allow-unused-prefixes). OK, or FileCheck's first error (with the
// directive and where in the module it stopped), file names replaced by
// "directives" and "module".
absl::Status RunFileCheck(const std::string& binary, const std::string& module_text,
                          const std::string& directives) {
  if (binary.empty()) return absl::FailedPreconditionError("FileCheck not found (set PASSLAB_FILECHECK)");
  ScratchDir dir;
  if (dir.path().empty()) return absl::InternalError("cannot create a scratch directory");
  std::string pattern = dir.path() + "/directives";
  std::string input = dir.path() + "/module";
  std::string err = dir.path() + "/stderr";
  if (!WriteStringToFile(pattern, directives).ok() || !WriteStringToFile(input, module_text).ok()) {
    return absl::InternalError("cannot write FileCheck's inputs");
  }
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int null = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, 2);
    if (null >= 0) dup2(null, 1);
    std::string input_flag = "--input-file=" + input;
    execl(binary.c_str(), binary.c_str(), "--check-prefixes=CHECK", "--allow-unused-prefixes",
          "--dump-input=never", input_flag.c_str(), pattern.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return absl::FailedPreconditionError(StrCat("cannot run FileCheck at ", binary));
  }
  std::string text = ReplaceAll(ReplaceAll(ReadFileToString(err).value_or(""), pattern, "directives"), input, "module");
  // The first error and the lines that show it (directive, caret, where the
  // scan stopped in the module).
  std::vector<std::string_view> lines = SplitAny(text, "\n");
  size_t first = 0;
  while (first < lines.size() && lines[first].find("error:") == std::string::npos) ++first;
  if (first == lines.size()) first = 0;
  std::vector<std::string_view> shown;
  for (size_t i = first; i < lines.size() && shown.size() < 6; ++i) {
    if (lines[i].empty()) continue;
    shown.push_back(lines[i]);
  }
  return absl::NotFoundError(shown.empty() ? "FileCheck failed" : Join(shown, "\n"));
}

int64_t ElementsIn(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& s : shape.tuple_shapes()) n += ElementsIn(s);
    return n;
  }
  return shape.IsArray() ? shape.element_count() : 0;
}

// The tolerance of a before/after comparison: f32's (abs 1e-4, rel 1e-3)
// unless either module computes in a narrower float type (a pass may move
// arithmetic into bf16, as XLA's bf16 dot algorithms do): then 2 ulps at 1.0
// of the narrowest one, e.g. 2^-6 for bf16.
ErrorSpec ToleranceFor(const HloModule& before, const HloModule& after) {
  int mantissa = MantissaBits(PrimitiveType::kF32);
  for (const HloModule* m : {&before, &after}) {
    for (const HloComputation* c : m->computations()) {
      for (const HloInstruction* i : c->instructions()) {
        ForEachSubshape(i->shape(), [&](const Shape& s, const ShapeIndex&) {
          if (s.IsArray() && IsFloatingPointType(s.element_type())) {
            mantissa = std::min(mantissa, MantissaBits(s.element_type()));
          }
        });
      }
    }
  }
  ErrorSpec spec{/*abs=*/1e-4, /*rel=*/1e-3, /*max_ulps=*/8};
  const double narrow = std::ldexp(1.0, 1 - mantissa);
  spec.abs = std::max(spec.abs, narrow);
  spec.rel = std::max(spec.rel, narrow);
  return spec;
}

// "equal", or why the values were not compared; an error when they differ.
absl::StatusOr<std::string> CompareValues(const HloModule& before, const HloModule& after,
                                          const RunOptions& options) {
  if (before.config().replica_count > 1 || before.config().num_partitions > 1) {
    return std::string("not compared: replicated or partitioned module");
  }
  int64_t elements = 0;
  for (const HloComputation* c : before.computations()) {
    for (const HloInstruction* i : c->instructions()) elements += ElementsIn(i->shape());
  }
  if (elements > options.max_eval_elements) {
    return StrCat("not compared: ", elements, " elements is more than the evaluator is given");
  }
  const auto& pb = before.entry_computation()->parameter_instructions();
  const auto& pa = after.entry_computation()->parameter_instructions();
  if (pb.size() != pa.size()) return std::string("not compared: the pass changed the entry's parameters");
  EvaluatorOptions eo;
  eo.max_loop_iterations = 100000;
  eo.num_threads = 1;
  std::vector<Literal> args = MakeRandomArguments(*before.entry_computation(), options.seed);
  absl::StatusOr<Literal> want = HloEvaluator(eo).Evaluate(before, args);
  if (!want.ok()) return StrCat("not compared: the input does not evaluate (", want.status().message(), ")");
  absl::StatusOr<Literal> got = HloEvaluator(eo).Evaluate(after, args);
  if (!got.ok()) {
    return absl::InvalidArgumentError(StrCat("the module after the pass does not evaluate: ", got.status().message()));
  }
  absl::Status cmp = CompareLiterals(*want, *got, ToleranceFor(before, after));
  if (!cmp.ok()) return absl::InvalidArgumentError(StrCat("values differ: ", cmp.message()));
  return std::string("equal");
}

// CompareValues in a child process (the parent keeps its state if the
// evaluator crashes or runs away): "ok:<text>" or "error:<text>" over a pipe.
absl::StatusOr<std::string> CompareValuesIsolated(const HloModule& before, const HloModule& after,
                                                  const RunOptions& options) {
  int fds[2];
  if (pipe(fds) != 0) return CompareValues(before, after, options);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return CompareValues(before, after, options);
  }
  if (pid == 0) {
    close(fds[0]);
    absl::StatusOr<std::string> r = CompareValues(before, after, options);
    std::string msg = r.ok() ? "ok:" + *r : "error:" + std::string(r.status().message());
    size_t off = 0;
    while (off < msg.size()) {
      ssize_t n = write(fds[1], msg.data() + off, msg.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.eval_timeout_s);
  bool timed_out = false;
  while (true) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, left);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    msg.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) {
    return StrCat("not compared: the evaluator took more than ", options.eval_timeout_s, " s");
  }
  if (msg.rfind("ok:", 0) == 0) return msg.substr(3);
  if (msg.rfind("error:", 0) == 0) return absl::InvalidArgumentError(msg.substr(6));
  return StrCat("not compared: the evaluator died (",
                WIFSIGNALED(status) ? StrCat("signal ", WTERMSIG(status)) : StrCat("status ", WEXITSTATUS(status)), ")");
}

CaseResult Fail(CaseResult r, Verdict v, std::string detail) {
  r.verdict = v;
  r.detail = std::move(detail);
  return r;
}

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kHeld: return "held";
    case Verdict::kNotModelled: return "pass not modelled";
    case Verdict::kParseError: return "parse error";
    case Verdict::kVerifyError: return "verify error";
    case Verdict::kBadOptions: return "bad options";
    case Verdict::kPassError: return "pass error";
    case Verdict::kChangedDiffers: return "changed differs";
    case Verdict::kFileCheckFailed: return "FileCheck failed";
    case Verdict::kExpectationFailed: return "expected structure differs";
    case Verdict::kOutputVerifyError: return "output does not verify";
    case Verdict::kValuesDiffer: return "values differ";
  }
  return "?";
}

absl::StatusOr<std::vector<Case>> LoadCases(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadMaybeGzip(path));
  std::vector<Case> cases;
  int64_t line_no = 0;
  for (std::string_view line : SplitAny(text, "\n")) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::string where = StrCat(path, ":", line_no);
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return absl::InvalidArgumentError(StrCat(where, ": not a JSON object (a case file has one per line)"));
    }
    Case c;
    c.line = line_no;
    for (auto [key, field] : {std::pair{"id", &c.id}, {"test", &c.test}, {"pass", &c.pass}, {"hlo", &c.hlo}}) {
      ASSIGN_OR_RETURN(std::string v, StringField(j, key, where));
      *field = v;
    }
    if (auto it = j.find("xla_file"); it != j.end() && it->is_string()) c.xla_file = it->get<std::string>();
    auto ch = j.find("expect_changed");
    if (ch == j.end() || !ch->is_boolean()) {
      return absl::InvalidArgumentError(StrCat(where, ": field 'expect_changed' is missing or not true/false"));
    }
    c.expect_changed = ch->get<bool>();
    if (auto fc = j.find("filecheck"); fc != j.end() && !fc->is_null()) {
      if (!fc->is_string()) return absl::InvalidArgumentError(StrCat(where, ": field 'filecheck' is not a string"));
      c.filecheck = fc->get<std::string>();
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string FindFileCheck() {
  if (const char* env = std::getenv("PASSLAB_FILECHECK"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  if (fs::exists("/usr/lib/llvm-22/bin/FileCheck", ec)) return "/usr/lib/llvm-22/bin/FileCheck";
  const char* path = std::getenv("PATH");
  for (std::string_view dir : SplitAny(path ? path : "", ":")) {
    for (const char* name : {"FileCheck-22", "FileCheck"}) {
      fs::path p = fs::path(std::string(dir)) / name;
      if (!dir.empty() && fs::exists(p, ec)) return p.string();
    }
  }
  return "";
}

CaseResult RunCase(const Case& c, const RunOptions& options) {
  CaseResult r;
  r.c = &c;
  const PassRegistryEntry* entry = FindRegisteredPass(c.pass);
  if (entry == nullptr) return Fail(r, Verdict::kNotModelled, StrCat("passlab has no pass named '", c.pass, "'"));

  std::vector<const CaseSpec*> specs = SpecsFor(c.test);
  PassOptionValues values = entry->NewOptions();
  for (const CaseSpec* s : specs) {
    for (std::string_view setting : s->options) {
      r.options.emplace_back(setting);
      size_t eq = setting.find('=');
      std::string_view name = setting.substr(0, eq);
      std::string_view value = eq == std::string_view::npos ? std::string_view("true") : setting.substr(eq + 1);
      absl::Status st = values.Set(c.pass, name, value);
      if (!st.ok()) return Fail(r, Verdict::kBadOptions, std::string(st.message()));
    }
  }

  ParseOptions po;
  po.infer_shape = InferInstructionShape;
  std::string name = c.test.empty() ? c.id : c.test;
  absl::StatusOr<std::unique_ptr<HloModule>> before = ParseHloModule(c.hlo, name, po);
  if (!before.ok()) return Fail(r, Verdict::kParseError, std::string(before.status().message()));
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.hlo, name, po);
  if (!module.ok()) return Fail(r, Verdict::kParseError, std::string(module.status().message()));
  bool unverified = false;
  for (const CaseSpec* s : specs) {
    unverified |= s->unverified;
    for (HloModule* m : {before->get(), module->get()}) {
      if (s->replica_count > 0) m->config().replica_count = s->replica_count;
      if (s->num_partitions > 0) m->config().num_partitions = s->num_partitions;
    }
  }
  if (absl::Status st = VerifyModule(**before); !unverified && !st.ok()) {
    return Fail(r, Verdict::kVerifyError, std::string(st.message()));
  }
  // The passes the test runs first: on both copies, so that the values
  // compared are those before and after the pass under test.
  for (const CaseSpec* s : specs) {
    for (std::string_view first : s->run_first) {
      const PassRegistryEntry* first_entry = FindRegisteredPass(first);
      if (first_entry == nullptr) return Fail(r, Verdict::kNotModelled, StrCat("passlab has no pass named '", first, "'"));
      for (HloModule* m : {before->get(), module->get()}) {
        absl::StatusOr<bool> ran = first_entry->Create(first_entry->NewOptions())->Run(*m);
        if (!ran.ok()) return Fail(r, Verdict::kPassError, StrCat(first, ": ", ran.status().message()));
      }
    }
  }

  std::unique_ptr<HloPassInterface> pass = entry->Create(values);
  absl::StatusOr<bool> changed = false;
  try {
    changed = pass->Run(**module);
  } catch (const std::exception& e) {
    changed = absl::InternalError(StrCat("exception: ", e.what()));
  }
  if (!changed.ok()) return Fail(r, Verdict::kPassError, std::string(changed.status().message()));
  r.changed = *changed;
  if (r.changed != c.expect_changed) {
    return Fail(r, Verdict::kChangedDiffers,
                StrCat("XLA's pass answers changed=", c.expect_changed ? "true" : "false", ", passlab's ",
                       r.changed ? "true" : "false"));
  }
  // An unverified test's module may not verify after the pass either.
  if (absl::Status st = VerifyModule(**module); !unverified && !st.ok()) {
    return Fail(r, Verdict::kOutputVerifyError, std::string(st.message()));
  }

  PrintOptions print;
  print.print_operand_shape = false;  // XLA's HloPrintOptions() default
  std::string text = PrintModule(**module, print);
  std::string filecheck = options.filecheck.empty() ? FindFileCheck() : options.filecheck;
  // XLA's RunAndFilecheckHloRewrite matches its directives only when the
  // pass changed the module.
  if (c.filecheck.has_value() && r.changed) {
    if (absl::Status st = RunFileCheck(filecheck, text, *c.filecheck); !st.ok()) {
      return Fail(r, Verdict::kFileCheckFailed, std::string(st.message()));
    }
  }
  for (const CaseSpec* s : specs) {
    if (s->expect.empty()) continue;
    if (absl::Status st = RunFileCheck(filecheck, text, std::string(s->expect)); !st.ok()) {
      return Fail(r, Verdict::kExpectationFailed, std::string(st.message()));
    }
  }

  if (options.evaluate) {
    absl::StatusOr<std::string> eval = CompareValuesIsolated(**before, **module, options);
    if (!eval.ok()) return Fail(r, Verdict::kValuesDiffer, std::string(eval.status().message()));
    r.evaluation = *eval;
  } else {
    r.evaluation = "not compared (--no-eval)";
  }
  return r;
}

std::map<std::string, PassTally> Tally(const std::vector<CaseResult>& results) {
  std::map<std::string, PassTally> t;
  for (const CaseResult& r : results) {
    PassTally& p = t[r.c->pass];
    ++p.total;
    if (r.verdict == Verdict::kHeld) ++p.held;
    if (r.verdict == Verdict::kNotModelled) p.modelled = false;
  }
  return t;
}

absl::StatusOr<std::map<std::string, int64_t>> ReadRatchet(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open"));
  std::map<std::string, int64_t> out;
  std::string line;
  int64_t no = 0;
  while (std::getline(in, line)) {
    ++no;
    std::string_view v = line;
    if (size_t hash = v.find('#'); hash != std::string_view::npos) v = v.substr(0, hash);
    std::vector<std::string_view> parts;
    for (std::string_view part : SplitAny(v, " \t\r")) {
      if (!part.empty()) parts.push_back(part);
    }
    if (parts.empty()) continue;
    int64_t held = 0;
    if (parts.size() != 2 || !SimpleAtoi(parts[1], &held) || held < 0) {
      return absl::InvalidArgumentError(StrCat(path, ":", no, ": expected 'PASS HELD', got '", line, "'"));
    }
    out[std::string(parts[0])] = held;
  }
  return out;
}

}  // namespace passlab::conformance
