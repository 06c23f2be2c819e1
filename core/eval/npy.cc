#include "core/eval/npy.h"

#include <fstream>

#include "core/ir/file_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

PrimitiveType StoredAs(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kBF16: case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN: case PrimitiveType::kF8E4M3B11FNUZ: case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ: case PrimitiveType::kF8E3M4: case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kF4E2M1FN:
      return PrimitiveType::kF32;
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4: return PrimitiveType::kS8;
    case PrimitiveType::kU1: case PrimitiveType::kU2: case PrimitiveType::kU4: return PrimitiveType::kU8;
    default: return t;
  }
}

std::optional<PrimitiveType> FromDescr(std::string d) {
  if (d.size() == 3 && (d[0] == '<' || d[0] == '|' || d[0] == '=')) d = d.substr(1);
  static const std::pair<const char*, PrimitiveType> kTable[] = {
      {"b1", PrimitiveType::kPred}, {"i1", PrimitiveType::kS8},   {"i2", PrimitiveType::kS16},
      {"i4", PrimitiveType::kS32},  {"i8", PrimitiveType::kS64},  {"u1", PrimitiveType::kU8},
      {"u2", PrimitiveType::kU16},  {"u4", PrimitiveType::kU32},  {"u8", PrimitiveType::kU64},
      {"f2", PrimitiveType::kF16},  {"f4", PrimitiveType::kF32},  {"f8", PrimitiveType::kF64},
      {"c8", PrimitiveType::kC64}};
  for (const auto& [name, type] : kTable) {
    if (d == name) return type;
  }
  if (d == "<c16" || d == "c16") return PrimitiveType::kC128;
  return std::nullopt;
}

}  // namespace

std::string NpyDescr(PrimitiveType type) {
  switch (StoredAs(type)) {
    case PrimitiveType::kPred: return "|b1";
    case PrimitiveType::kS8: return "|i1";
    case PrimitiveType::kS16: return "<i2";
    case PrimitiveType::kS32: return "<i4";
    case PrimitiveType::kS64: return "<i8";
    case PrimitiveType::kU8: return "|u1";
    case PrimitiveType::kU16: return "<u2";
    case PrimitiveType::kU32: return "<u4";
    case PrimitiveType::kU64: return "<u8";
    case PrimitiveType::kF16: return "<f2";
    case PrimitiveType::kF32: return "<f4";
    case PrimitiveType::kF64: return "<f8";
    case PrimitiveType::kC64: return "<c8";
    case PrimitiveType::kC128: return "<c16";
    default: return "|V1";
  }
}

absl::StatusOr<Literal> ReadNpy(const std::string& path) {
  ASSIGN_OR_RETURN(std::string data, ReadFileToString(path));
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) {
    return absl::InvalidArgumentError(StrCat(path, ": not a .npy file (bad magic)"));
  }
  int major = static_cast<unsigned char>(data[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) | (static_cast<unsigned char>(data[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) return absl::InvalidArgumentError(StrCat(path, ": truncated header"));
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return absl::InvalidArgumentError(StrCat(path, ": unsupported .npy version ", major));
  }
  if (offset + header_len > data.size()) return absl::InvalidArgumentError(StrCat(path, ": truncated header"));
  std::string header = data.substr(offset, header_len);
  auto field = [&](const std::string& key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t colon = header.find(':', k);
    size_t start = header.find_first_not_of(" ", colon + 1);
    if (header[start] == '\'') return header.substr(start + 1, header.find('\'', start + 1) - start - 1);
    if (header[start] == '(') return header.substr(start + 1, header.find(')', start) - start - 1);
    return header.substr(start, header.find_first_of(",}", start) - start);
  };
  std::string descr = field("descr");
  if (field("fortran_order").find("True") != std::string::npos) {
    return absl::InvalidArgumentError(StrCat(path, ": Fortran-order arrays are not supported (use np.ascontiguousarray)"));
  }
  if (!descr.empty() && descr[0] == '>') return absl::InvalidArgumentError(StrCat(path, ": big-endian arrays are not supported"));
  std::optional<PrimitiveType> type = FromDescr(descr);
  if (!type) {
    return absl::InvalidArgumentError(StrCat(path, ": unsupported dtype '", descr,
                                             "' (bf16 and the f8 types travel as float32, see npy.h)"));
  }
  std::vector<int64_t> dims;
  for (std::string_view part : SplitAny(field("shape"), ",")) {
    std::string p(part);
    p.erase(std::remove(p.begin(), p.end(), ' '), p.end());
    if (p.empty()) continue;
    int64_t d;
    if (!SimpleAtoi(p, &d) || d < 0) return absl::InvalidArgumentError(StrCat(path, ": bad shape '", field("shape"), "'"));
    dims.push_back(d);
  }
  Literal lit(Shape(*type, dims));
  size_t need = static_cast<size_t>(lit.size_bytes());
  if (data.size() - offset - header_len < need) {
    return absl::InvalidArgumentError(StrCat(path, ": the data is shorter than the header's shape says"));
  }
  std::memcpy(lit.untyped_data(), data.data() + offset + header_len, need);
  return lit;
}

absl::Status WriteNpy(const Literal& literal, const std::string& path) {
  if (!literal.shape().IsArray()) return absl::InvalidArgumentError("only arrays can be written as .npy");
  PrimitiveType stored = StoredAs(literal.shape().element_type());
  Literal data = literal;
  if (stored != literal.shape().element_type()) {
    ASSIGN_OR_RETURN(Literal c, literal.Convert(stored));
    data = std::move(c);
  }
  std::string shape;
  for (int64_t d : literal.shape().dimensions()) StrAppend(&shape, d, ",");
  if (literal.shape().rank() > 1) shape.pop_back();
  std::string header = StrCat("{'descr': '", NpyDescr(stored), "', 'fortran_order': False, 'shape': (", shape, "), }");
  // Version 1.0 has a 2-byte header length; 2.0 (4 bytes) for longer ones.
  bool v2 = header.size() + 64 + 11 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::InternalError(StrCat(path, ": cannot write"));
  out.write(v2 ? "\x93NUMPY\x02\x00" : "\x93NUMPY\x01\x00", 8);
  for (size_t i = 0; i < prefix - 8; ++i) out.put(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out << header;
  out.write(reinterpret_cast<const char*>(data.untyped_data()), data.size_bytes());
  if (!out) return absl::InternalError(StrCat(path, ": write failed"));
  return absl::OkStatus();
}

}  // namespace passlab
