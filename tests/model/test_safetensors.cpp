#include <catch2/catch.hpp>

#include <cstring>

#include "common/error.hpp"
#include "model/safetensors.hpp"
#include "model/safetensors_builder.hpp"

using namespace attnbench;
using attnbench::testing::float_bytes;
using attnbench::testing::safetensors_bytes;

namespace {

safetensors_header parse(const std::string& bytes) {
  return parse_safetensors(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                           "test.safetensors");
}

// The message parse() throws, or "" when it accepts the bytes.
std::string error_of(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

const std::string two_tensors =
    R"({"__metadata__": {"format": "pt"}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]},)"
    R"( "a": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]}})";

}  // namespace

TEST_CASE("a valid safetensors header is read with every tensor's dtype, shape and offsets",
          "[model][safetensors]") {
  const auto h = parse(safetensors_bytes(two_tensors, std::string(16, '\0')));
  REQUIRE(h.tensors.size() == 2);
  CHECK(h.metadata.at("format") == "pt");
  CHECK(h.data_start == 8 + two_tensors.size());
  const auto* a = h.find("a");
  REQUIRE(a);
  CHECK(a->dtype == "F16");
  CHECK(a->element_size == 2);
  CHECK(a->shape == std::vector<int64_t>{2, 2});
  CHECK(a->numel() == 4);
  CHECK(a->begin == 0);
  CHECK(a->end == 8);
  CHECK(h.find("b")->end == 16);
  CHECK(h.find("c") == nullptr);
}

TEST_CASE("the mapped file gives each tensor's bytes", "[model][safetensors]") {
  const std::string header = R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}})";
  const auto path =
      testing::write_temp_file("ok.safetensors", safetensors_bytes(header, float_bytes({1.5f, -2, 3})));
  const safetensors_file file(path.string());
  const auto* w = file.header().find("w");
  REQUIRE(w);
  float values[3];
  std::memcpy(values, file.data(*w), sizeof values);
  CHECK(values[0] == 1.5f);
  CHECK(values[1] == -2.0f);
  CHECK(values[2] == 3.0f);
}

TEST_CASE("broken safetensors files are refused with a message that says what is wrong",
          "[model][safetensors]") {
  const std::string one = R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  SECTION("truncated before the header length") {
    CHECK_THAT(error_of(std::string("\x05\x00\x00", 3)), Catch::Contains("truncated: 3 bytes"));
    CHECK_THAT(error_of(""), Catch::Contains("truncated: 0 bytes"));
  }
  SECTION("truncated inside the data") {
    CHECK_THAT(error_of(safetensors_bytes(one, std::string(5, '\0'))),
               Catch::Contains("tensor \"w\": data_offsets [0, 8] run past the data region (5 bytes)"));
  }
  SECTION("header length beyond the file") {
    CHECK_THAT(error_of(safetensors_bytes(one, "", 1000)),
               Catch::Contains("header length 1000 runs past the end"));
  }
  SECTION("header length beyond the bound") {
    CHECK_THAT(error_of(safetensors_bytes(one, "", int64_t(1) << 40)),
               Catch::Contains("exceeds the 104857600-byte bound"));
  }
  SECTION("offsets out of range") {
    const std::string h = R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})";
    CHECK_THAT(error_of(safetensors_bytes(h, std::string(12, '\0'))),
               Catch::Contains("run past the data region"));
    const std::string backwards = R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})";
    CHECK_THAT(error_of(safetensors_bytes(backwards, std::string(8, '\0'))),
               Catch::Contains("end before they begin"));
    const std::string negative = R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [-8, 0]}})";
    CHECK_THAT(error_of(safetensors_bytes(negative, std::string(8, '\0'))),
               Catch::Contains("non-negative integers"));
  }
  SECTION("size that does not match the shape") {
    const std::string h = R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})";
    CHECK_THAT(error_of(safetensors_bytes(h, std::string(8, '\0'))),
               Catch::Contains("hold 8 bytes, but shape [3] of F32 needs 12"));
    const std::string huge =
        R"({"w": {"dtype": "F64", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})";
    CHECK_THAT(error_of(safetensors_bytes(huge, std::string(8, '\0'))), Catch::Contains("more than 2^64"));
  }
  SECTION("overlapping tensors") {
    const std::string h = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                          R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})";
    CHECK_THAT(error_of(safetensors_bytes(h, std::string(12, '\0'))),
               Catch::Contains("tensors \"a\" [0, 8] and \"b\" [4, 12] overlap"));
  }
  SECTION("unknown dtype") {
    const std::string h = R"({"w": {"dtype": "F24", "shape": [2], "data_offsets": [0, 6]}})";
    CHECK_THAT(error_of(safetensors_bytes(h, std::string(6, '\0'))),
               Catch::Contains("tensor \"w\": unknown dtype \"F24\""));
  }
  SECTION("non-UTF-8 header") {
    CHECK_THAT(error_of(safetensors_bytes("{\"w\xff\": {}}", "")),
               Catch::Contains("header is not valid UTF-8 (byte 3"));
  }
  SECTION("header that is not a JSON object") {
    CHECK_THAT(error_of(safetensors_bytes("[1, 2]", "")),
               Catch::Contains("header must be a JSON object; got [1,2]"));
    CHECK_THAT(error_of(safetensors_bytes("{\"w\": ", "")), Catch::Contains("header is not valid JSON"));
    CHECK_THAT(error_of(safetensors_bytes(R"({"w": 3})", "")),
               Catch::Contains("tensor \"w\": expected an object"));
  }
  SECTION("missing or extra keys") {
    CHECK_THAT(error_of(safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [0]}})", "")),
               Catch::Contains("tensor \"w\": missing \"data_offsets\""));
    CHECK_THAT(error_of(safetensors_bytes(
                   R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0], "x": 1}})", "")),
               Catch::Contains("unknown key \"x\""));
    CHECK_THAT(error_of(safetensors_bytes(R"({"__metadata__": {"a": 1}})", "")),
               Catch::Contains("__metadata__.a must be a string"));
  }
  SECTION("the file name leads every message") {
    CHECK_THAT(error_of("\x05"), Catch::StartsWith("test.safetensors: "));
  }
}

TEST_CASE("a file that does not exist is an input error naming it", "[model][safetensors]") {
  CHECK_THROWS_WITH(safetensors_file("/nonexistent/model.safetensors"),
                    Catch::StartsWith("/nonexistent/model.safetensors: cannot open"));
}
