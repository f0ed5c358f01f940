// Precision "amp" on injected machines: the two CPUs one cloud label came with (a Zen 3 with AVX2
// only, a Zen 4 with avx512_bf16), an Intel with AMX, a CPU with fp16 but no bf16, and GPUs of
// three generations. Nothing here depends on the machine the test runs on.
#include "techniques/amp_choice.hpp"

#include <catch2/catch.hpp>

#include "config/config_parser.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

environment_info cpu(const std::vector<std::string>& features, std::vector<matmul_ceiling> ceilings = {}) {
  environment_info env;
  env.device = "cpu";
  env.cpu_id = "AuthenticAMD family 25 model 1 stepping 1";
  env.cpu_features = features;
  env.ceilings = std::move(ceilings);
  return env;
}

environment_info gpu(const std::string& capability) {
  environment_info env;
  env.device = "cuda:0";
  env.device_name = "Some GPU";
  env.gpu_capability = capability;
  return env;
}

}  // namespace

TEST_CASE("amp: a CPU without native reduced precision runs fp32 and says why, with the ceilings",
          "[techniques][precision]") {
  // The Zen 3 of issue 20: bf16 ceiling 0.9 GFLOP/s against fp32's 90.8.
  const amp_decision d = choose_amp(cpu({"avx2", "fma", "f16c"}, {{"fp32", 1024, 90.8}, {"bf16", 256, 0.9}}));
  CHECK(d.precision == precision_kind::fp32);
  CHECK(d.dtype == "fp32");
  CHECK(d.considered == "bf16");
  CHECK_THAT(d.reason, Catch::StartsWith("precision \"amp\" runs fp32 here (no autocast)"));
  CHECK_THAT(d.reason, Catch::Contains("no native bf16 or fp16 (features: avx2 fma f16c)"));
  CHECK_THAT(d.reason, Catch::Contains("bf16 0.9, fp32 90.8 GFLOP/s"));

  // Not measured (a rank other than 0): the same decision, said without ceilings.
  const amp_decision unmeasured = choose_amp(cpu({"avx2", "fma"}));
  CHECK(unmeasured.precision == precision_kind::fp32);
  CHECK_THAT(unmeasured.reason, Catch::Contains("not measured"));

  // Features unknown (no /proc/cpuinfo): nothing is assumed.
  environment_info unknown = cpu({});
  unknown.cpu_id.clear();
  CHECK(choose_amp(unknown).precision == precision_kind::fp32);
  CHECK_THAT(choose_amp(unknown).reason, Catch::Contains("unknown"));
}

TEST_CASE("amp: CPUs with native bf16 or fp16 use it", "[techniques][precision]") {
  const amp_decision zen4 =
      choose_amp(cpu({"avx2", "fma", "avx512f", "avx512_bf16"}, {{"fp32", 1024, 199.5}, {"bf16", 1024, 440.8}}));
  CHECK(zen4.precision == precision_kind::amp_bf16);
  CHECK(zen4.dtype == "bf16");
  CHECK_THAT(zen4.reason, Catch::StartsWith("precision \"amp\" runs amp-bf16 here: this CPU has avx512_bf16"));
  CHECK_THAT(zen4.reason, Catch::Contains("bf16 441, fp32 200 GFLOP/s"));

  CHECK(choose_amp(cpu({"avx512f", "amx_tile", "amx_bf16"})).precision == precision_kind::amp_bf16);
  const amp_decision fp16_only = choose_amp(cpu({"avx512f", "avx512_fp16"}));
  CHECK(fp16_only.precision == precision_kind::amp_fp16);
  CHECK(fp16_only.considered == "fp16");
}

TEST_CASE("amp: GPUs by compute capability", "[techniques][precision]") {
  CHECK(tensor_core_dtypes("9.0") == std::vector<std::string>{"fp16", "bf16", "tf32", "fp8"});
  CHECK(tensor_core_dtypes("8.0") == std::vector<std::string>{"fp16", "bf16", "tf32"});
  CHECK(tensor_core_dtypes("7.5") == std::vector<std::string>{"fp16"});
  CHECK(tensor_core_dtypes("6.1").empty());
  CHECK(tensor_core_dtypes("").empty());
  CHECK(tensor_core_dtypes("nine").empty());

  CHECK(choose_amp(gpu("9.0")).precision == precision_kind::amp_bf16);  // H100/H200
  CHECK(choose_amp(gpu("7.5")).precision == precision_kind::amp_fp16);  // T4
  const amp_decision pascal = choose_amp(gpu("6.1"));
  CHECK(pascal.precision == precision_kind::fp32);
  CHECK_THAT(pascal.reason, Catch::Contains("no tensor cores"));
  CHECK(choose_amp(gpu("")).precision == precision_kind::fp32);
}

TEST_CASE("amp: resolve_amp sets only the variants written \"amp\"", "[techniques][precision][config]") {
  config cfg = attnbench::testing::parse_owned(R"({
    "name": "amp-test", "model": {"preset": "bert-tiny"},
    "workload": {"samples": 2, "lengths": {"kind": "fixed", "length": 8}},
    "device": "cpu",
    "variants": [{"name": "base"}, {"name": "auto", "precision": "amp"}, {"name": "explicit", "precision": "amp-bf16"}],
    "baseline": "base", "output": {"dir": "unused"}
  })", "", testing::cpu_only());
  REQUIRE(any_amp(cfg));
  CHECK(cfg.variants[1].precision_auto);
  CHECK(cfg.variants[1].precision == precision_kind::fp32);  // until resolved
  CHECK_FALSE(cfg.variants[2].precision_auto);

  resolve_amp(cfg, cpu({"avx2", "fma", "avx512_bf16"}));
  CHECK(cfg.variants[1].precision == precision_kind::amp_bf16);
  CHECK_THAT(cfg.variants[1].precision_choice, Catch::Contains("avx512_bf16"));
  CHECK(cfg.variants[0].precision_choice.empty());
  CHECK(cfg.variants[2].precision == precision_kind::amp_bf16);
  CHECK(cfg.variants[2].precision_choice.empty());

  resolve_amp(cfg, cpu({"avx2", "fma"}));
  CHECK(cfg.variants[1].precision == precision_kind::fp32);
  CHECK(cfg.variants[2].precision == precision_kind::amp_bf16);  // explicit stays as written
}

// Issue 30: no loss scaler, so no fp16 training: an explicit amp-fp16 train variant is refused with
// the reason, and "amp" on a GPU whose tensor cores have fp16 only trains in fp32, saying why.
TEST_CASE("amp: fp16 training is refused with its reason (no loss scaling)", "[techniques][precision][config]") {
  const std::string train = R"({
    "name": "train-fp16", "scenario": "train", "model": {"preset": "bert-tiny"},
    "workload": {"samples": 2, "lengths": {"kind": "fixed", "length": 8}},
    "device": "cpu",
    "variants": [{"name": "base"}, {"name": "half", "precision": "PRECISION"}],
    "baseline": "base", "output": {"dir": "unused"}
  })";
  const auto with = [&](const std::string& precision) {
    std::string text = train;
    text.replace(text.find("PRECISION"), 9, precision);
    return text;
  };
  CHECK_THROWS_WITH(attnbench::testing::parse_owned(with("amp-fp16"), "", testing::cpu_only()),
                    Catch::Contains("variants[1].precision") && Catch::Contains("loss scaling") &&
                        Catch::Contains("amp-bf16"));
  CHECK_NOTHROW(attnbench::testing::parse_owned(with("amp-bf16"), "", testing::cpu_only()));

  config cfg = attnbench::testing::parse_owned(with("amp"), "", testing::cpu_only());
  resolve_amp(cfg, gpu("7.5"));  // Turing: fp16 tensor cores, no bf16
  CHECK(cfg.variants[1].precision == precision_kind::fp32);
  CHECK_THAT(cfg.variants[1].precision_choice, Catch::Contains("runs fp32") && Catch::Contains("loss scaling"));
  resolve_amp(cfg, gpu("9.0"));  // Hopper: bf16, which trains
  CHECK(cfg.variants[1].precision == precision_kind::amp_bf16);
  // Inference keeps fp16 where it is the tensor cores' dtype.
  cfg.scenario = "offline";
  resolve_amp(cfg, gpu("7.5"));
  CHECK(cfg.variants[1].precision == precision_kind::amp_fp16);
}
