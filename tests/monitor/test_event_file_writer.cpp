#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.hpp"
#include "monitor/event_file_writer.hpp"

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

uint64_t read_u64(const std::string& s, std::size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}

uint32_t read_u32(const std::string& s, std::size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}

}  // namespace

TEST_CASE("CRC-32C and TFRecord's mask match the published values", "[monitor]") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);  // the standard check value of CRC-32C
  CHECK(crc32c("", 0) == 0u);
  const uint32_t c = crc32c("123456789", 9);
  CHECK(masked_crc32c("123456789", 9) == static_cast<uint32_t>(((c >> 15) | (c << 17)) + 0xa282ead8u));
}

TEST_CASE("a scalar event is the Event and Summary protobufs, byte for byte", "[monitor]") {
  // wall_time 1.5 (field 1, fixed64), step 3 (field 2, varint), summary (field 5) holding
  // value (field 1) {tag "a" (field 1), simple_value 2.0f (field 2, fixed32)}.
  const std::string want = bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x10, 0x03, 0x2a, 0x0a, 0x0a, 0x08, 0x0a, 0x01,
                                  'a', 0x15, 0, 0, 0, 0x40});
  CHECK(scalar_event(1.5, 3, "a", 2.0f) == want);
  CHECK(file_version_event(1.5) == bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x1a, 13}) + "brain.Event:2");
}

TEST_CASE("a TFRecord frames its payload with length and masked CRCs", "[monitor]") {
  const std::string payload = "hello";
  const std::string rec = tfrecord(payload);
  REQUIRE(rec.size() == 8 + 4 + payload.size() + 4);
  CHECK(read_u64(rec, 0) == payload.size());
  CHECK(read_u32(rec, 8) == masked_crc32c(rec.data(), 8));
  CHECK(rec.substr(12, payload.size()) == payload);
  CHECK(read_u32(rec, 12 + payload.size()) == masked_crc32c(payload.data(), payload.size()));
}

TEST_CASE("the writer starts a tfevents file with its version and appends scalars", "[monitor]") {
  const fs::path dir = fs::temp_directory_path() / ("attnbench_events_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    event_file_writer w(dir / "run", "--tensorboard");
    CHECK(w.path().filename().string().find("events.out.tfevents.") == 0);
    w.add_scalar("throughput/samples_per_s", 123.5, 0);
    w.add_scalar("throughput/samples_per_s", 124.5, 1);
    std::ifstream in(w.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    const std::string all = s.str();
    // Three records: the version, then two scalars; each framed as above.
    std::size_t at = 0;
    int records = 0;
    while (at < all.size()) {
      const uint64_t n = read_u64(all, at);
      REQUIRE(at + 16 + n <= all.size());
      CHECK(read_u32(all, at + 12 + n) == masked_crc32c(all.data() + at + 12, n));
      if (records == 0) CHECK(all.substr(at + 12, n).find("brain.Event:2") != std::string::npos);
      at += 16 + n;
      ++records;
    }
    CHECK(records == 3);
  }
  fs::remove_all(dir);
  // A folder that cannot be made is an input error naming the option.
  CHECK_THROWS_AS(event_file_writer("/proc/attnbench-no/run", "--tensorboard"), input_error);
}
