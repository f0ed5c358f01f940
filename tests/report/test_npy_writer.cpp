#include <catch2/catch.hpp>

#include <cstring>
#include <stdexcept>
#include <string>

#include "report/npy_writer.hpp"

using namespace attnbench;

namespace {
size_t header_total(const std::string& npy) {
  return 10 + (static_cast<unsigned char>(npy[8]) | static_cast<unsigned char>(npy[9]) << 8);
}
}  // namespace

TEST_CASE("npy encoding of a 2x3 float32 array", "[report]") {
  const float data[] = {1.0f, -2.0f, 0.5f, 0.0f, 3.25f, 1e-3f};
  const std::string npy = encode_npy_f32(data, {2, 3});

  // Expected bytes are numpy.save's for np.array(..., dtype='<f4') (numpy 2.4).
  constexpr size_t header = 128;
  REQUIRE(npy.size() == header + sizeof data);
  CHECK(npy.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(header_total(npy) == header);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK(npy.substr(10, header - 10) == dict + std::string(header - 10 - dict.size() - 1, ' ') + "\n");
  // 1.0f is 0x3F800000, little-endian; -2.0f is 0xC0000000.
  CHECK(npy.substr(header, 8) == std::string("\x00\x00\x80\x3F\x00\x00\x00\xC0", 8));
  float back[6];
  std::memcpy(back, npy.data() + header, sizeof back);  // this host is little-endian (x86/ARM)
  CHECK(std::memcmp(back, data, sizeof data) == 0);
}

TEST_CASE("npy shapes: one dimension, scalar, long shapes", "[report]") {
  const float data[] = {1.0f, 2.0f, 3.0f, 4.0f};
  const std::string vec = encode_npy_f32(data, {4});
  CHECK(vec.find("'shape': (4,), }") != std::string::npos);
  CHECK(vec.size() == 144);  // numpy.save of np.arange(1, 5, dtype='<f4')
  const std::string scalar = encode_npy_f32(data, {});
  CHECK(scalar.find("'shape': (), }") != std::string::npos);
  CHECK(scalar.size() == 132);
  const std::string many = encode_npy_f32(data, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4});
  CHECK(header_total(many) == 128);
  const std::string wide =
      encode_npy_f32(data, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4});
  CHECK(header_total(wide) % 64 == 0);
  CHECK(header_total(wide) == 192);
  CHECK(wide[header_total(wide) - 1] == '\n');
  CHECK_THROWS_AS(encode_npy_f32(data, {-1}), std::invalid_argument);
}
