#include "common/cpu_info.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnbench {
namespace {

const std::vector<std::string> reported_features{"avx2",        "fma",         "f16c",     "avx512f",
                                                 "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile",
                                                 "amx_bf16",    "amx_fp16"};

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trimmed(line);
}

}  // namespace

bool cpu_info::has(const std::string& feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

cpu_info parse_cpuinfo(const std::string& text) {
  std::istringstream in(text);
  std::string line, vendor, family, model, stepping, flags;
  cpu_info cpu;
  while (std::getline(in, line)) {
    if (trimmed(line).empty()) {
      if (!vendor.empty() || !flags.empty()) break;  // the first processor's block is enough
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon)), value = trimmed(line.substr(colon + 1));
    if (key == "vendor_id") vendor = value;
    else if (key == "cpu family") family = value;
    else if (key == "model") model = value;
    else if (key == "stepping") stepping = value;
    else if (key == "model name") cpu.model_name = value;
    else if (key == "flags") flags = value;
  }
  if (!vendor.empty())
    cpu.id = vendor + " family " + family + " model " + model + " stepping " + stepping;
  std::istringstream words(flags);
  std::vector<std::string> present;
  for (std::string w; words >> w;) present.push_back(w);
  for (const auto& f : reported_features)
    if (std::find(present.begin(), present.end(), f) != present.end()) cpu.features.push_back(f);
  return cpu;
}

int64_t count_cpu_list(const std::string& list) {
  int64_t count = 0;
  std::istringstream in(trimmed(list));
  for (std::string range; std::getline(in, range, ',');) {
    long first = 0, last = 0;
    char dash = 0;
    std::istringstream r(range);
    if (!(r >> first)) return 0;
    if (r >> dash) {
      if (dash != '-' || !(r >> last) || last < first) return 0;
    } else {
      last = first;
    }
    count += last - first + 1;
  }
  return count;
}

std::string describe_caches(const std::string& cache_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(cache_dir, ec)) return "";
  std::vector<std::string> levels;
  for (const auto& entry : fs::directory_iterator(cache_dir, ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string level = read_line(entry.path() / "level"), type = read_line(entry.path() / "type"),
                      size = read_line(entry.path() / "size");
    if (level.empty() || size.empty()) continue;
    const std::string suffix = type == "Data" ? "d" : type == "Instruction" ? "i" : "";
    levels.push_back("L" + level + suffix + " " + size);
  }
  std::sort(levels.begin(), levels.end());  // L1d, L1i, L2, L3: the index order is not guaranteed
  std::string out;
  for (const auto& l : levels) out += (out.empty() ? "" : ", ") + l;
  return out;
}

cpu_info this_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::ostringstream text;
  text << in.rdbuf();
  cpu_info cpu = parse_cpuinfo(text.str());
  cpu.logical_cpus = count_cpu_list(read_line("/sys/devices/system/cpu/online"));
  cpu.caches = describe_caches("/sys/devices/system/cpu/cpu0/cache");
  return cpu;
}

std::optional<std::string> slow_dtype_note(const cpu_info& cpu, const std::string& dtype) {
  if (cpu.id.empty()) return std::nullopt;  // not known: say nothing rather than guess
  if (dtype == "bf16" && !cpu.has("avx512_bf16") && !cpu.has("amx_bf16"))
    return "this CPU has no native bf16 (neither avx512_bf16 nor amx_bf16): its bf16 matmuls run on a slow "
           "path; compare the bf16 and fp32 matmul ceilings";
  if (dtype == "fp16" && !cpu.has("avx512_fp16") && !cpu.has("amx_fp16"))
    return "this CPU has no native fp16 (neither avx512_fp16 nor amx_fp16): its fp16 matmuls run on a slow "
           "path; compare the fp16 and fp32 matmul ceilings";
  return std::nullopt;
}

}  // namespace attnbench
