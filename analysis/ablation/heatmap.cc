#include "analysis/ablation/heatmap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "analysis/ablation/report_internal.h"

namespace passlab {
namespace {

using ordered_json = nlohmann::ordered_json;
using ablation_internal::FormatChange;
using ablation_internal::FormatMs;
using ablation_internal::NumberField;
using ablation_internal::PassesWithKind;
using ablation_internal::TextField;
using ablation_internal::Value;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A baseline kernel before the columns are chosen.
struct BaseKernel {
  std::string name, group;
  double ns = 0;
  int touched = 0;
  double weight = 0;  // sum of the capped |change| over the shown rows (removed: 1)
};

std::string GroupOf(const AblationReportKernel& kernel) {
  std::string detail = kernel.detail.value_or("");
  if (!detail.empty()) return detail;
  std::string kind = kernel.kind.value_or("");
  return kind.empty() ? "other" : kind;
}

double AbsEffect(const AblationReportVariant& variant) {
  double ratio = Value(variant.ratio);
  return std::isnan(ratio) ? -1 : std::abs(ratio - 1);
}

// A Markdown table cell: pipes escaped, one line.
std::string MdCell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

HeatmapCell CellOf(const std::map<std::string, std::optional<double>>& times, const BaseKernel& kernel) {
  HeatmapCell cell;
  auto it = times.find(kernel.name);
  if (it == times.end()) {
    cell.state = HeatmapCellState::kRemoved;
    cell.variant_ns = kNaN;
    cell.change = kNaN;
    return cell;
  }
  cell.variant_ns = Value(it->second);
  if (std::isnan(cell.variant_ns)) {
    cell.change = kNaN;
  } else if (kernel.ns > 0) {
    cell.change = cell.variant_ns / kernel.ns - 1;
  } else {
    cell.change = cell.variant_ns == 0 ? 0 : kNaN;
  }
  return cell;
}

}  // namespace

double CapChange(double change) {
  if (std::isnan(change)) return change;
  return std::clamp(change, -1.0, 1.0);
}

std::string HeatmapColour(double change) {
  if (std::isnan(change)) return "#d0d4db";
  double c = CapChange(change);
  // White to the end colour, linearly in each channel.
  const int end[3] = {c < 0 ? 0x21 : 0xb2, c < 0 ? 0x66 : 0x18, c < 0 ? 0xac : 0x2b};
  const double t = std::abs(c);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(255 + (end[0] - 255) * t)),
                static_cast<int>(std::lround(255 + (end[1] - 255) * t)),
                static_cast<int>(std::lround(255 + (end[2] - 255) * t)));
  return buf;
}

KernelHeatmap BuildKernelHeatmap(const AblationReport& report, const HeatmapOptions& options) {
  KernelHeatmap map;
  std::vector<BaseKernel> base;
  std::set<std::string> base_names;
  for (const AblationReportKernel& k : report.baseline.kernels) {
    if (!base_names.insert(k.name).second) continue;
    double ns = Value(k.ns);
    base.push_back({k.name, GroupOf(k), std::isnan(ns) ? 0 : ns});
  }

  // Rows: every variant with kernel times, largest |ratio - 1| first.
  // Reports older than kernel_times_ns have only the kernel diff.
  std::vector<const AblationReportVariant*> variants;
  for (const AblationReportVariant& v : report.variants) {
    if (v.kernel_times_ns.has_value() && !v.kernel_times_ns->empty()) {
      variants.push_back(&v);
      continue;
    }
    if (!v.kernel_times_ns.has_value() && !v.kernel_diff.empty()) ++map.variants_without_times;
  }
  std::stable_sort(variants.begin(), variants.end(), [](const AblationReportVariant* a, const AblationReportVariant* b) {
    double ea = AbsEffect(*a), eb = AbsEffect(*b);
    if (ea != eb) return ea > eb;
    return a->name < b->name;
  });
  if (variants.size() > options.max_rows) {
    map.rows_left_out = variants.size() - options.max_rows;
    variants.resize(options.max_rows);
  }

  // Every baseline kernel's cell in every shown row; how much each is touched.
  std::vector<std::vector<HeatmapCell>> all_cells;
  for (const AblationReportVariant* v : variants) {
    const std::map<std::string, std::optional<double>>& times = *v->kernel_times_ns;
    HeatmapRow row;
    row.variant = v->name;
    row.label = PassesWithKind(*v);
    row.outcome = v->outcome.value_or("");
    row.ratio = Value(v->ratio);
    std::vector<HeatmapCell> cells;
    cells.reserve(base.size());
    for (BaseKernel& k : base) {
      HeatmapCell cell = CellOf(times, k);
      if (cell.state == HeatmapCellState::kRemoved) {
        ++row.removed;
        ++k.touched;
        k.weight += 1;
      } else if (!std::isnan(cell.change)) {
        if (std::abs(cell.change) > options.touch_threshold) ++k.touched;
        k.weight += std::abs(CapChange(cell.change));
      }
      cells.push_back(cell);
    }
    for (const auto& [name, ns] : times) {
      if (base_names.contains(name)) continue;
      row.added.push_back({name, Value(ns)});
    }
    std::stable_sort(row.added.begin(), row.added.end(), [](const HeatmapAdded& a, const HeatmapAdded& b) {
      double na = std::isnan(a.ns) ? -1 : a.ns, nb = std::isnan(b.ns) ? -1 : b.ns;
      if (na != nb) return na > nb;
      return a.kernel < b.kernel;
    });
    map.rows.push_back(std::move(row));
    all_cells.push_back(std::move(cells));
  }

  // Columns: the most touched kernels (then the most moved, then the
  // longest), at most max_columns.
  auto more_touched = [&](size_t a, size_t b) {
    if (base[a].touched != base[b].touched) return base[a].touched > base[b].touched;
    if (base[a].weight != base[b].weight) return base[a].weight > base[b].weight;
    if (base[a].ns != base[b].ns) return base[a].ns > base[b].ns;
    return base[a].name < base[b].name;
  };
  std::vector<size_t> order(base.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), more_touched);
  if (order.size() > options.max_columns) {
    map.columns_left_out = order.size() - options.max_columns;
    for (size_t i = options.max_columns; i < order.size(); ++i) {
      if (base[order[i]].touched == 0) ++map.untouched_left_out;
    }
    order.resize(options.max_columns);
  }
  // Grouped by hero kind; groups in the order of their most touched kernel
  // (`order` is sorted, so that is the order of first appearance).
  std::vector<std::string> group_order;
  for (size_t i : order) {
    if (std::find(group_order.begin(), group_order.end(), base[i].group) == group_order.end()) {
      group_order.push_back(base[i].group);
    }
  }
  std::vector<size_t> selected;
  for (const std::string& group : group_order) {
    HeatmapGroup g{group, selected.size(), 0};
    for (size_t i : order) {
      if (base[i].group != group) continue;
      selected.push_back(i);
      ++g.count;
    }
    map.groups.push_back(g);
  }
  for (size_t i : selected) {
    map.columns.push_back({base[i].name, base[i].group, base[i].ns, base[i].touched});
  }
  for (size_t r = 0; r < map.rows.size(); ++r) {
    for (size_t i : selected) map.rows[r].cells.push_back(all_cells[r][i]);
  }
  return map;
}

std::string RenderHeatmapMarkdown(const AblationReport& report) {
  KernelHeatmap map = BuildKernelHeatmap(report);
  if (map.rows.empty() || map.columns.empty()) return "";
  // The kernels (present on both sides) whose time moved most, either way;
  // removed and added ones are counted in the sentence after the table.
  struct Top {
    size_t row, column;
    double delta;
  };
  std::vector<Top> top;
  for (size_t r = 0; r < map.rows.size(); ++r) {
    for (size_t c = 0; c < map.columns.size(); ++c) {
      const HeatmapCell& cell = map.rows[r].cells[c];
      if (cell.state == HeatmapCellState::kRemoved) continue;
      double delta = std::abs(cell.variant_ns - map.columns[c].baseline_ns);
      if (!std::isnan(delta) && delta > 0) top.push_back({r, c, delta});
    }
  }
  std::stable_sort(top.begin(), top.end(), [](const Top& a, const Top& b) { return a.delta > b.delta; });
  constexpr size_t kTop = 10;
  if (top.size() > kTop) top.resize(kTop);
  std::string md = fmt::format(
      "\n## Passes x kernels\n\nThe {} largest time changes of single kernels among the {} variants with the largest "
      "overall change and the {} most touched of the baseline's {} kernels, as the heatmap in report.html shows them.\n\n",
      top.size(), map.rows.size(), map.columns.size(), map.columns.size() + map.columns_left_out);
  if (!top.empty()) {
    md += "| Passes | Kernel | Hero kind | Baseline | Variant | Change |\n|---|---|---|---:|---:|---:|\n";
    for (const Top& t : top) {
      const HeatmapRow& row = map.rows[t.row];
      const HeatmapColumn& col = map.columns[t.column];
      const HeatmapCell& cell = row.cells[t.column];
      md += fmt::format("| {} | `{}` | {} | {} | {} | {} |\n", MdCell(row.label), MdCell(col.kernel),
                        MdCell(col.group), FormatMs(col.baseline_ns), FormatMs(cell.variant_ns),
                        FormatChange(cell.change + 1));
    }
  }
  // Which variant replaces the most kernels.
  const HeatmapRow* most = nullptr;
  for (const HeatmapRow& row : map.rows) {
    if (most == nullptr || row.removed + row.added.size() > most->removed + most->added.size()) most = &row;
  }
  if (most != nullptr && most->removed + most->added.size() > 0) {
    md += fmt::format("\nMost kernels replaced: {} ({} of the baseline's removed, {} added).\n",
                      MdCell(most->label), most->removed, most->added.size());
  }
  return md;
}

}  // namespace passlab
