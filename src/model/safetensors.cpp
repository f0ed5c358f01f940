#include "model/safetensors.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/utf8.hpp"

namespace attnbench {
namespace {

constexpr std::size_t length_prefix_bytes = 8;

struct dtype_entry {
  const char* name;
  std::size_t size;
};
constexpr dtype_entry dtypes[] = {{"F64", 8},     {"F32", 4},     {"F16", 2}, {"BF16", 2}, {"I64", 8},
                                  {"I32", 4},     {"I16", 2},     {"I8", 1},  {"U8", 1},   {"BOOL", 1},
                                  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"U16", 2}, {"U32", 4},  {"U64", 8}};

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw input_error(fmt::format("{}: {}", source, what));
}

// A JSON value shown in a message, cut short so a hostile header cannot flood it.
std::string shown(const nlohmann::json& v) {
  constexpr std::size_t max_chars = 60;
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > max_chars ? s.substr(0, max_chars) + "..." : s;
}

uint64_t read_offset(const nlohmann::json& v, const std::string& source, const std::string& tensor) {
  if (!v.is_number_unsigned())
    bad(source,
        fmt::format("tensor \"{}\": data_offsets must hold non-negative integers; got {}", tensor, shown(v)));
  return v.get<uint64_t>();
}

safetensors_tensor read_tensor(const std::string& name, const nlohmann::json& entry, uint64_t data_size,
                               const std::string& source) {
  const std::string where = fmt::format("tensor \"{}\"", name);
  if (!entry.is_object()) bad(source, fmt::format("{}: expected an object; got {}", where, shown(entry)));
  for (const auto& item : entry.items())
    if (item.key() != "dtype" && item.key() != "shape" && item.key() != "data_offsets")
      bad(source, fmt::format("{}: unknown key \"{}\"", where, item.key()));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(key)) bad(source, fmt::format("{}: missing \"{}\"", where, key));

  safetensors_tensor t;
  t.name = name;
  const auto& dtype = entry["dtype"];
  if (!dtype.is_string()) bad(source, fmt::format("{}: dtype must be a string; got {}", where, shown(dtype)));
  t.dtype = dtype.get<std::string>();
  t.element_size = safetensors_dtype_size(t.dtype);
  if (t.element_size == 0) bad(source, fmt::format("{}: unknown dtype {}", where, shown(dtype)));

  const auto& shape = entry["shape"];
  if (!shape.is_array()) bad(source, fmt::format("{}: shape must be an array; got {}", where, shown(shape)));
  // Bytes = product(shape) × element size, computed without overflow.
  uint64_t bytes = t.element_size;
  bool overflow = false;
  for (const auto& d : shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      bad(source, fmt::format("{}: shape must hold non-negative integers; got {}", where, shown(shape)));
    const uint64_t dim = d.get<uint64_t>();
    t.shape.push_back(static_cast<int64_t>(dim));
    if (dim != 0 && bytes > std::numeric_limits<uint64_t>::max() / dim) overflow = true;
    bytes = overflow ? 0 : bytes * dim;
  }
  if (std::count(t.shape.begin(), t.shape.end(), 0)) bytes = 0, overflow = false;

  const auto& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    bad(source, fmt::format("{}: data_offsets must be [begin, end]; got {}", where, shown(offsets)));
  t.begin = read_offset(offsets[0], source, name);
  t.end = read_offset(offsets[1], source, name);
  if (t.begin > t.end)
    bad(source, fmt::format("{}: data_offsets [{}, {}] end before they begin", where, t.begin, t.end));
  if (t.end > data_size)
    bad(source, fmt::format("{}: data_offsets [{}, {}] run past the data region ({} bytes)", where, t.begin,
                            t.end, data_size));
  if (overflow || t.end - t.begin != bytes)
    bad(source, fmt::format("{}: data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {}", where,
                            t.begin, t.end, t.end - t.begin, shown(shape), t.dtype,
                            overflow ? std::string("more than 2^64") : std::to_string(bytes)));
  return t;
}

}  // namespace

int64_t safetensors_tensor::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

const safetensors_tensor* safetensors_header::find(const std::string& name) const {
  auto it = std::lower_bound(tensors.begin(), tensors.end(), name,
                             [](const safetensors_tensor& t, const std::string& n) { return t.name < n; });
  return it != tensors.end() && it->name == name ? &*it : nullptr;
}

std::size_t safetensors_dtype_size(const std::string& dtype) {
  for (const auto& d : dtypes)
    if (dtype == d.name) return d.size;
  return 0;
}

safetensors_header parse_safetensors(const unsigned char* bytes, std::size_t size,
                                     const std::string& source) {
  if (size < length_prefix_bytes)
    bad(source,
        fmt::format("truncated: {} bytes, but a safetensors file starts with an 8-byte header length", size));
  uint64_t n = 0;
  for (std::size_t i = 0; i < length_prefix_bytes; ++i) n |= uint64_t(bytes[i]) << (8 * i);  // little-endian
  if (n > safetensors_max_header_bytes)
    bad(source, fmt::format("header length {} exceeds the {}-byte bound", n, safetensors_max_header_bytes));
  if (n > size - length_prefix_bytes)
    bad(source, fmt::format("header length {} runs past the end of the file ({} bytes after the length)", n,
                            size - length_prefix_bytes));
  const std::string_view text(reinterpret_cast<const char*>(bytes + length_prefix_bytes), n);
  std::size_t bad_at = 0;
  if (!decode_utf8(text, &bad_at))
    bad(source, fmt::format("header is not valid UTF-8 (byte {} of the header)", bad_at));

  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse errors, and numbers out of range
    bad(source, fmt::format("header is not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) bad(source, fmt::format("header must be a JSON object; got {}", shown(doc)));

  safetensors_header h;
  h.data_start = length_prefix_bytes + n;
  const uint64_t data_size = size - h.data_start;
  for (const auto& item : doc.items()) {
    if (item.key() == "__metadata__") {
      if (!item.value().is_object()) bad(source, "__metadata__ must be an object of strings");
      for (const auto& m : item.value().items()) {
        if (!m.value().is_string()) bad(source, fmt::format("__metadata__.{} must be a string", m.key()));
        h.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    h.tensors.push_back(read_tensor(item.key(), item.value(), data_size, source));
  }
  // No two tensors may share a byte: sorted by where they begin, each starts after the last ends.
  std::vector<const safetensors_tensor*> by_offset;
  for (const auto& t : h.tensors)
    if (t.end > t.begin) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      bad(source, fmt::format("tensors \"{}\" [{}, {}] and \"{}\" [{}, {}] overlap", by_offset[i - 1]->name,
                              by_offset[i - 1]->begin, by_offset[i - 1]->end, by_offset[i]->name,
                              by_offset[i]->begin, by_offset[i]->end));
  std::sort(h.tensors.begin(), h.tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return h;
}

safetensors_file::safetensors_file(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw input_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw input_error(fmt::format("{}: not a regular file", path));
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw input_error(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
    bytes_ = static_cast<const unsigned char*>(p);
  } else {
    ::close(fd);
  }
  try {
    static const unsigned char empty = 0;
    header_ = parse_safetensors(bytes_ ? bytes_ : &empty, size_, path);
  } catch (...) {
    if (bytes_) ::munmap(const_cast<unsigned char*>(bytes_), size_);
    throw;
  }
}

safetensors_file::~safetensors_file() {
  if (bytes_) ::munmap(const_cast<unsigned char*>(bytes_), size_);
}

}  // namespace attnbench
