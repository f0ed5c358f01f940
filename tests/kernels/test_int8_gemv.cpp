// The weight-only int8 kernel (kernels/cpu/int8_gemv.hpp), validated before anything times it:
// every code path this CPU has, against the float64 product of the dequantized weight, over
// shapes that take every loop's tail (rows not a multiple of 4, outputs not a multiple of 4, in
// not a multiple of the vector width); and a linear site prepared for it (model/packed_linear.hpp).
#include <catch2/catch.hpp>

#include <algorithm>

#include "kernels/cpu/flash_attention.hpp"
#include "kernels/cpu/int8_gemv.hpp"
#include "model/int8_linear.hpp"
#include "model/packed_linear.hpp"

using namespace attnbench;

namespace {

double rel_l2(const torch::Tensor& out, const torch::Tensor& ref) {
  return (out.to(torch::kDouble) - ref).norm().item<double>() / ref.norm().item<double>();
}

}  // namespace

TEST_CASE("int8 weight-only kernel: every code path equals the dequantized product", "[kernels][int8]") {
  torch::manual_seed(3);
  const std::vector<kernels::flash_isa> paths = cpu_flash_isas();
  for (kernels::flash_isa isa : paths) {
    if (isa != kernels::flash_isa::scalar && isa != kernels::flash_isa::avx2 && isa != kernels::flash_isa::avx512)
      continue;
    for (int64_t rows : {1, 3, 6}) {
      for (int64_t in : {64, 37}) {
        for (int64_t out : {13, 48}) {
          INFO(to_string(isa) << ": rows " << rows << ", in " << in << ", out " << out);
          const auto w = torch::randn({out, in});
          const int8_linear_weight q = quantize_weight(w, 8);
          const auto x = torch::randn({rows, in});
          const auto bias = torch::randn({out});
          const auto ref = x.to(torch::kDouble).matmul(dequantize_weight(q).to(torch::kDouble).t()) +
                           bias.to(torch::kDouble);
          // a path asked for: a head_dim no vector divides falls back (cpu_flash_path), so the
          // kernel's own tails run on the scalar path for in = 37
          const auto y = int8_weight_linear(x, q.weight, q.scale, bias, isa);
          REQUIRE(y.sizes() == ref.sizes());
          CHECK(rel_l2(y, ref) < 1e-6);
          const auto no_bias = int8_weight_linear(x, q.weight, q.scale, torch::Tensor(), isa);
          CHECK(rel_l2(no_bias, ref - bias.to(torch::kDouble)) < 1e-6);
        }
      }
    }
  }
  // Leading dimensions are kept; other float inputs are widened; bad shapes are errors naming them.
  const auto w = torch::randn({8, 32});
  const int8_linear_weight q = quantize_weight(w, 8);
  const auto x = torch::randn({2, 3, 32});
  CHECK(int8_weight_linear(x, q.weight, q.scale, torch::Tensor()).sizes() == std::vector<int64_t>{2, 3, 8});
  CHECK(int8_weight_linear(x.to(torch::kBFloat16), q.weight, q.scale, torch::Tensor()).scalar_type() == torch::kFloat);
  CHECK_THROWS_WITH(int8_weight_linear(torch::randn({2, 31}), q.weight, q.scale, torch::Tensor()),
                    Catch::Contains("x must be (..., 32)"));
  CHECK_THROWS_WITH(int8_weight_linear(x, w, q.scale, torch::Tensor()), Catch::Contains("2-D int8"));
}

TEST_CASE("int8 weight-only kernel: the code path follows cpu-flash's fp32 choice on injected machines",
          "[kernels][int8]") {
  using kernels::flash_isa;
  const std::vector<flash_isa> zen3{flash_isa::scalar, flash_isa::avx2};
  const std::vector<flash_isa> spr{flash_isa::scalar, flash_isa::avx2, flash_isa::avx512, flash_isa::avx512_bf16,
                                   flash_isa::amx_bf16};
  CHECK(choose_flash_path(zen3, torch::kFloat, 768, std::nullopt) == flash_isa::avx2);
  CHECK(choose_flash_path(spr, torch::kFloat, 768, std::nullopt) == flash_isa::avx512);  // never a bf16 path
  CHECK(choose_flash_path(spr, torch::kFloat, 37, std::nullopt) == flash_isa::scalar);
  CHECK(int8_weight_linear_path(768) == cpu_flash_path(torch::kFloat, 768));
}

TEST_CASE("int8 weight-only linear sites run the kernel on their quantized weight", "[kernels][int8]") {
  torch::manual_seed(4);
  torch::nn::Linear linear(torch::nn::LinearOptions(64, 24));
  torch::NoGradGuard no_grad;
  CHECK_THROWS_WITH(pack_linear(linear, linear_kind::int8_weight), Catch::Contains("no quantized weight"));
  quantize_linear(*linear, 8);
  const prepared_linear site = pack_linear(linear, linear_kind::int8_weight);
  CHECK(site.kind == linear_kind::int8_weight);
  CHECK(site.weight.scalar_type() == torch::kChar);
  const auto x = torch::randn({5, 64});
  const auto q = quantized_weight_of(*linear);
  REQUIRE(q.has_value());
  const auto ref = x.to(torch::kDouble).matmul(dequantize_weight(*q).to(torch::kDouble).t()) +
                   linear->bias.to(torch::kDouble);
  CHECK(rel_l2(linear_forward(linear, site, x), ref) < 1e-6);
  CHECK(rel_l2(linear_forward(linear, site, x, /*gelu=*/true), torch::gelu(ref)) < 1e-6);
  // against the fp32 weight: the quantization error alone, well under int8's tolerance
  CHECK(rel_l2(linear_forward(linear, site, x), linear(x).to(torch::kDouble)) < 2e-2);
}
