#include "monitor/event_file_writer.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <unistd.h>

#include "common/error.hpp"

namespace attnbench {
namespace {

// The reflected CRC-32C table (polynomial 0x82F63B78).
const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

template <typename T>
void put_le(std::string& out, T v) {  // little-endian, as TFRecord and protobuf's fixed types are
  for (std::size_t i = 0; i < sizeof(T); ++i) out += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// A protobuf field key: (field number << 3) | wire type.
void put_key(std::string& out, int field, int wire_type) { put_varint(out, static_cast<uint64_t>(field << 3 | wire_type)); }
constexpr int wire_varint = 0, wire_fixed64 = 1, wire_bytes = 2, wire_fixed32 = 5;

void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_key(out, field, wire_bytes);
  put_varint(out, bytes.size());
  out += bytes;
}

void put_double(std::string& out, int field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, wire_fixed64);
  put_le(out, bits);
}

// Event (tensorflow/core/util/event.proto): wall_time = 1 (double), step = 2 (int64),
// file_version = 3 (string), summary = 5 (Summary).
std::string event_head(double wall_time, int64_t step) {
  std::string e;
  put_double(e, 1, wall_time);
  if (step != 0) {
    put_key(e, 2, wire_varint);
    put_varint(e, static_cast<uint64_t>(step));  // int64: two's complement as a varint
  }
  return e;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

uint32_t crc32c(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) c = crc_table()[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

uint32_t masked_crc32c(const void* data, std::size_t n) {
  const uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string tfrecord(const std::string& payload) {
  std::string head;
  put_le(head, static_cast<uint64_t>(payload.size()));
  std::string out = head;
  put_le(out, masked_crc32c(head.data(), head.size()));
  out += payload;
  put_le(out, masked_crc32c(payload.data(), payload.size()));
  return out;
}

std::string scalar_event(double wall_time, int64_t step, const std::string& tag, float value) {
  // Summary.Value: tag = 1 (string), simple_value = 2 (float); Summary: value = 1 (repeated).
  std::string v;
  put_bytes(v, 1, tag);
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(v, 2, wire_fixed32);
  put_le(v, bits);
  std::string summary;
  put_bytes(summary, 1, v);
  std::string e = event_head(wall_time, step);
  put_bytes(e, 5, summary);
  return e;
}

std::string file_version_event(double wall_time) {
  std::string e = event_head(wall_time, 0);
  put_bytes(e, 3, "brain.Event:2");
  return e;
}

event_file_writer::event_file_writer(const std::filesystem::path& dir, const std::string& option) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const double t = now_s();
  path_ = dir / fmt::format("events.out.tfevents.{}.{}.{}.attnbench", static_cast<int64_t>(t), host, getpid());
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) throw input_error(option, fmt::format("cannot create {}: {}", path_.string(), std::strerror(errno)));
  write(file_version_event(t));
}

event_file_writer::~event_file_writer() {
  if (file_) std::fclose(file_);
}

void event_file_writer::write(const std::string& payload) {
  const std::string rec = tfrecord(payload);
  std::fwrite(rec.data(), 1, rec.size(), file_);
  std::fflush(file_);
}

void event_file_writer::add_scalar(const std::string& tag, double value, int64_t step) {
  const std::lock_guard<std::mutex> lock(mutex_);
  write(scalar_event(now_s(), step, tag, static_cast<float>(value)));
}

}  // namespace attnbench
