// libFuzzer target for the HLO text parser: any input must either be
// rejected with an error or parse to a module whose printed form parses again
// and prints identically. Built with -DPASSLAB_FUZZ=ON and clang (ASan+UBSan).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = passlab::ParseHloModule(text, "fuzz");
  if (!module.ok()) return 0;
  std::string printed = passlab::PrintModule(**module);
  auto again = passlab::ParseHloModule(printed, "fuzz-printed");
  if (!again.ok()) {
    std::fprintf(stderr, "printed module does not parse: %s\n%s\n",
                 std::string(again.status().message()).c_str(), printed.c_str());
    std::abort();
  }
  if (passlab::PrintModule(**again) != printed) {
    std::fprintf(stderr, "printing is not idempotent:\n%s\n", printed.c_str());
    std::abort();
  }
  return 0;
}
