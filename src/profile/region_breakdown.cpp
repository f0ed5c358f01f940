#include "profile/region_breakdown.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

namespace attnbench {
namespace {

bool is_layer_region(const std::string& name) {
  return std::find(layer_regions.begin(), layer_regions.end(), name) != layer_regions.end();
}

bool is_attention(const std::string& name) { return name.rfind("attention.", 0) == 0; }

double per_layer_ms(const region_row& r, const region_breakdown& b) {
  return b.layers > 0 ? static_cast<double>(r.total_ns) / 1e6 / static_cast<double>(b.layers) : 0;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A peak in MiB, or n/a when the profiler recorded no memory (profile_memory false).
std::string mib(int64_t bytes, const region_breakdown& b) {
  if (!b.memory_recorded) return "n/a";
  return fmt::format("{:.2f}", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string peak_field(int64_t bytes, const region_breakdown& b) {
  return b.memory_recorded ? std::to_string(bytes) : std::string{};
}

// The innermost layer containing event i, or -1.
int64_t layer_of(std::size_t i, const std::vector<trace_event>& events, const std::vector<int64_t>& parents) {
  for (int64_t p = parents[i]; p >= 0; p = parents[static_cast<std::size_t>(p)])
    if (events[static_cast<std::size_t>(p)].kind == event_kind::region &&
        events[static_cast<std::size_t>(p)].name == layer_region)
      return p;
  return -1;
}

}  // namespace

region_breakdown make_region_breakdown(const std::string& variant, const std::vector<trace_event>& events,
                                       bool gpu_memory) {
  const auto parents = enclosing_events(events);
  region_breakdown b;
  b.variant = variant;

  // Peak working memory of every region instance: walk the memory events in time order and
  // add each to the running sum of every region around it.
  std::vector<std::size_t> memory;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].kind == event_kind::memory && events[i].on_gpu == gpu_memory && parents[i] >= 0)
      memory.push_back(i);
  std::stable_sort(memory.begin(), memory.end(),
                   [&](std::size_t a, std::size_t b) { return events[a].start_ns < events[b].start_ns; });
  std::vector<int64_t> current(events.size(), 0), peak(events.size(), 0);
  for (std::size_t m : memory)
    for (int64_t p = parents[m]; p >= 0; p = parents[static_cast<std::size_t>(p)]) {
      const auto k = static_cast<std::size_t>(p);
      if (events[k].kind != event_kind::region) continue;
      current[k] += events[m].bytes;
      peak[k] = std::max(peak[k], current[k]);
    }

  std::map<std::string, region_row> rows;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const trace_event& e = events[i];
    if (e.kind != event_kind::region) continue;
    if (e.name == layer_region) {
      ++b.layers;
      b.layer_ns += e.duration_ns();
      b.layer_peak_bytes = std::max(b.layer_peak_bytes, peak[i]);
      continue;
    }
    // Only regions directly inside a layer count: nested labels would be counted twice.
    if (!is_layer_region(e.name) || parents[i] < 0 || layer_of(i, events, parents) != parents[i]) continue;
    region_row& r = rows[e.name];
    r.name = e.name;
    ++r.instances;
    r.total_ns += e.duration_ns();
    r.peak_bytes = std::max(r.peak_bytes, peak[i]);
  }
  int64_t labelled = 0;
  for (auto name : layer_regions) {
    auto it = rows.find(std::string(name));
    if (it == rows.end()) continue;
    region_row r = it->second;
    r.share = b.layer_ns > 0 ? static_cast<double>(r.total_ns) / static_cast<double>(b.layer_ns) : 0;
    labelled += r.total_ns;
    if (is_attention(r.name)) b.attention_ns += r.total_ns;
    b.rows.push_back(r);
  }
  region_row rest;
  rest.name = std::string(unlabelled_region);
  rest.instances = b.layers;
  rest.total_ns = b.layer_ns - labelled;
  rest.share = b.layer_ns > 0 ? static_cast<double>(rest.total_ns) / static_cast<double>(b.layer_ns) : 0;
  b.rows.push_back(rest);
  b.attention_share =
      b.layer_ns > 0 ? static_cast<double>(b.attention_ns) / static_cast<double>(b.layer_ns) : 0;
  return b;
}

std::string region_breakdown_markdown(const std::vector<region_breakdown>& variants) {
  // Every region any variant recorded, in forward order, then unlabelled.
  std::vector<std::string> names;
  for (auto name : layer_regions)
    for (const auto& v : variants)
      if (std::any_of(v.rows.begin(), v.rows.end(), [&](const region_row& r) { return r.name == name; })) {
        names.emplace_back(name);
        break;
      }
  names.emplace_back(unlabelled_region);
  std::string head = "| Region |", rule = "|---|";
  for (const auto& v : variants) {
    head += fmt::format(" {0}: share | {0}: ms/layer | {0}: peak MiB |", v.variant);
    rule += "---:|---:|---:|";
  }
  std::string out = head + "\n" + rule + "\n";
  for (const auto& name : names) {
    out += "| " + name + " |";
    for (const auto& v : variants) {
      auto it =
          std::find_if(v.rows.begin(), v.rows.end(), [&](const region_row& r) { return r.name == name; });
      if (it == v.rows.end()) {
        out += " – | – | – |";
        continue;
      }
      const bool memory = name != unlabelled_region;
      out += fmt::format(" {:.1f}% | {:.3f} | {} |", 100.0 * it->share, per_layer_ms(*it, v),
                         memory ? mib(it->peak_bytes, v) : "–");
    }
    out += "\n";
  }
  out += "| **attention (all attention.\\*)** |";
  for (const auto& v : variants)
    out += fmt::format(
        " **{:.1f}%** | {:.3f} | – |", 100.0 * v.attention_share,
        v.layers > 0 ? static_cast<double>(v.attention_ns) / 1e6 / static_cast<double>(v.layers) : 0);
  out += "\n| **layer** |";
  for (const auto& v : variants)
    out +=
        fmt::format(" 100% | {:.3f} | {} |",
                    v.layers > 0 ? static_cast<double>(v.layer_ns) / 1e6 / static_cast<double>(v.layers) : 0,
                    mib(v.layer_peak_bytes, v));
  return out + "\n";
}

std::string region_breakdown_csv(const std::vector<region_breakdown>& breakdowns) {
  std::string out = "variant,seq,region,instances,total_ms,ms_per_layer,share,peak_bytes\n";
  for (const auto& v : breakdowns) {
    const std::string head =
        csv_field(v.variant) + "," + (v.seq > 0 ? std::to_string(v.seq) : std::string("all"));
    for (const auto& r : v.rows)
      out += fmt::format("{},{},{},{:.6f},{:.6f},{:.6f},{}\n", head, r.name, r.instances,
                         static_cast<double>(r.total_ns) / 1e6, per_layer_ms(r, v), r.share, peak_field(r.peak_bytes, v));
    out +=
        fmt::format("{},{},{},{:.6f},{:.6f},{:.6f},{}\n", head, layer_region, v.layers,
                    static_cast<double>(v.layer_ns) / 1e6,
                    v.layers > 0 ? static_cast<double>(v.layer_ns) / 1e6 / static_cast<double>(v.layers) : 0,
                    1.0, peak_field(v.layer_peak_bytes, v));
  }
  return out;
}

std::string attention_by_length_markdown(const std::vector<region_breakdown>& by_length) {
  std::vector<std::string> variants;
  std::set<int64_t> lengths;
  for (const auto& b : by_length) {
    if (std::find(variants.begin(), variants.end(), b.variant) == variants.end())
      variants.push_back(b.variant);
    lengths.insert(b.seq);
  }
  std::string out = "| Seq |", rule = "|---:|";
  for (const auto& v : variants) {
    out += fmt::format(" {0}: attention share | {0}: ms/layer | {0}: attention peak MiB |", v);
    rule += "---:|---:|---:|";
  }
  out += "\n" + rule + "\n";
  for (int64_t seq : lengths) {
    out += fmt::format("| {} |", seq);
    for (const auto& v : variants) {
      auto it = std::find_if(by_length.begin(), by_length.end(),
                             [&](const region_breakdown& b) { return b.variant == v && b.seq == seq; });
      if (it == by_length.end()) {
        out += " – | – | – |";
        continue;
      }
      int64_t peak = 0;
      for (const auto& r : it->rows)
        if (is_attention(r.name)) peak = std::max(peak, r.peak_bytes);
      out += fmt::format(
          " {:.1f}% | {:.3f} | {} |", 100.0 * it->attention_share,
          it->layers > 0 ? static_cast<double>(it->layer_ns) / 1e6 / static_cast<double>(it->layers) : 0,
          mib(peak, *it));
    }
    out += "\n";
  }
  return out;
}

}  // namespace attnbench
