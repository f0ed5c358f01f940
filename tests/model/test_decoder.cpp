// The decoders (model/decoder.hpp): the KV cache gives the logits a full forward gives, the two
// attention cores agree, grouped-query attention, Hugging Face weights and greedy generation
// against transformers' (scripts/decoder_reference.py, in the reference environment), and the
// token comparison the generate scenario's check rests on.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "model/decoder.hpp"
#include "model/safetensors.hpp"
#include "runner/generate_scenario.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

double rel_l2(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a.to(torch::kDouble) - b.to(torch::kDouble)).norm() / b.to(torch::kDouble).norm()).item<double>();
}

}  // namespace

TEST_CASE("decoder: prefill plus cached decode steps give a full forward's logits", "[model][decoder]") {
  torch::NoGradGuard no_grad;
  for (const auto family : {model_family::gpt2, model_family::llama}) {
    for (const auto kind : {attention_kind::sdpa, attention_kind::naive, attention_kind::custom}) {
      INFO(to_string(family) << " " << to_string(kind));
      DecoderLM m = testing::seeded_tiny_decoder(family, 7);
      m->set_attention({kind, sdpa_backend::auto_select, true, ""});
      const auto ids = torch::randint(0, 512, {2, 12}, torch::kLong);
      kv_cache whole = make_kv_cache(m->dims(), 2, 12, torch::kFloat, torch::kCPU);
      const auto full = m->forward(ids, whole);  // (2, 12, 512)
      CHECK(whole.length == 12);
      kv_cache inc = make_kv_cache(m->dims(), 2, 12, torch::kFloat, torch::kCPU);
      std::vector<torch::Tensor> parts{m->forward(ids.narrow(1, 0, 5), inc)};
      parts.push_back(m->forward(ids.narrow(1, 5, 3), inc));  // a chunk after a prefix: the explicit mask
      for (int64_t t = 8; t < 12; ++t) parts.push_back(m->forward(ids.narrow(1, t, 1), inc));
      CHECK(rel_l2(torch::cat(parts, 1), full) < 1e-5);
      CHECK(inc.bytes() == 2 * 2 * 2 * m->dims().kv_heads * 12 * 16 * 4);
    }
  }
}

TEST_CASE("decoder: naive and sdpa attention agree, and a position past the cache is refused", "[model][decoder]") {
  torch::NoGradGuard no_grad;
  DecoderLM m = testing::seeded_tiny_decoder(model_family::llama, 3);
  const auto ids = torch::randint(0, 512, {1, 9}, torch::kLong);
  kv_cache a = make_kv_cache(m->dims(), 1, 9, torch::kFloat, torch::kCPU);
  kv_cache b = make_kv_cache(m->dims(), 1, 9, torch::kFloat, torch::kCPU);
  m->set_attention({attention_kind::sdpa, sdpa_backend::auto_select, true, ""});
  const auto x = m->forward(ids, a);
  m->set_attention({attention_kind::naive, sdpa_backend::auto_select, true, ""});
  CHECK(rel_l2(m->forward(ids, b), x) < 1e-5);
  CHECK_THROWS_WITH(m->forward(ids.narrow(1, 0, 1), b), Catch::Contains("KV cache holds 9 positions"));
}

TEST_CASE("decoder: greedy generation is the argmax of the teacher-forced logits, and copies keep the weights",
          "[model][decoder]") {
  torch::NoGradGuard no_grad;
  DecoderLM m = testing::seeded_tiny_decoder(model_family::gpt2, 11);
  const auto prompt = torch::randint(0, 512, {3, 6}, torch::kLong);
  const generation g = generate_greedy(m, prompt, 5, torch::kFloat);
  REQUIRE(g.tokens.sizes() == torch::IntArrayRef({3, 5}));
  CHECK(g.step_ms.size() == 4);
  CHECK(g.prefill_ms > 0);
  const auto forced = teacher_forced_logits(m, prompt, g.tokens, torch::kFloat);
  CHECK(torch::equal(forced.argmax(-1), g.tokens));
  DecoderLM copy = copy_decoder(m, torch::kFloat);
  CHECK(torch::equal(generate_greedy(copy, prompt, 5, torch::kFloat).tokens, g.tokens));
  DecoderLM half = copy_decoder(m, torch::kBFloat16);
  CHECK(half->dtype() == torch::kBFloat16);
  const auto bf = teacher_forced_logits(half, prompt, g.tokens, torch::kBFloat16);
  CHECK(rel_l2(bf, forced) < 0.05);
  CHECK(rel_l2(bf, forced) > 0);
}

TEST_CASE("decoder: a left-padded batch generates each prompt's own tokens and logits", "[model][decoder]") {
  torch::NoGradGuard no_grad;
  for (const auto family : {model_family::gpt2, model_family::llama}) {
    for (const auto kind : {attention_kind::sdpa, attention_kind::naive, attention_kind::custom}) {
      INFO(to_string(family) << " " << to_string(kind));
      DecoderLM m = testing::seeded_tiny_decoder(family, 5);
      m->set_attention({kind, sdpa_backend::auto_select, true, ""});
      // Prompts of 9, 4 and 7 tokens, left-padded to 9 with a token id the pad mask must hide.
      const std::vector<int64_t> lengths{9, 4, 7};
      std::vector<torch::Tensor> alone;
      auto batch = torch::full({3, 9}, 17, torch::kLong);
      std::vector<int64_t> pad;
      for (std::size_t r = 0; r < lengths.size(); ++r) {
        const auto p = torch::randint(0, 512, {1, lengths[r]}, torch::kLong);
        alone.push_back(p);
        batch[static_cast<int64_t>(r)].narrow(0, 9 - lengths[r], lengths[r]).copy_(p[0]);
        pad.push_back(9 - lengths[r]);
      }
      const generation g = generate_greedy(m, batch, 6, torch::kFloat, pad);
      const auto forced = teacher_forced_logits(m, batch, g.tokens, torch::kFloat, pad);
      CHECK(torch::equal(forced.argmax(-1), g.tokens));
      for (std::size_t r = 0; r < lengths.size(); ++r) {
        INFO("row " << r);
        const generation one = generate_greedy(m, alone[r], 6, torch::kFloat);
        CHECK(torch::equal(one.tokens[0], g.tokens[static_cast<int64_t>(r)]));
        const auto own = teacher_forced_logits(m, alone[r], one.tokens, torch::kFloat);
        CHECK(rel_l2(forced.narrow(0, static_cast<int64_t>(r), 1), own) < 1e-5);
      }
      // Without the padding named, the pad tokens are read as a prompt: the short rows change.
      const auto unmasked = teacher_forced_logits(m, batch, g.tokens, torch::kFloat);
      CHECK(rel_l2(unmasked.narrow(0, 1, 1), forced.narrow(0, 1, 1)) > 1e-3);
    }
  }
}

TEST_CASE("generate check: a sequence that diverges at step 3 is named, identical ones are counted", "[decoder][check]") {
  const auto base = torch::arange(40, torch::kLong).view({4, 10});
  SECTION("never diverges") {
    const token_comparison c = compare_tokens(base.clone(), base);
    CHECK(c.identical == 4);
    CHECK(c.divergences.empty());
    CHECK(c.token_agreement == 1.0);
  }
  SECTION("diverges at step 3") {
    auto v = base.clone();
    v[2][3] = 999;
    v[2][7] = 998;
    const token_comparison c = compare_tokens(v, base);
    CHECK(c.sequences == 4);
    CHECK(c.identical == 3);
    REQUIRE(c.divergences.size() == 1);
    CHECK(c.divergences[0] == std::make_pair<int64_t, int64_t>(2, 3));
    CHECK(c.token_agreement == Approx(38.0 / 40.0));
  }
}

// transformers generates from weights it saves; attnbench loads them and must generate the same
// greedy tokens with logits within 1e-4 (relative L2). Skips where transformers is absent.
TEST_CASE("decoder: GPT-2 and Llama weights give transformers' greedy tokens and logits", "[model][decoder][reference]") {
  const char* env = std::getenv("ATTNBENCH_REFERENCE_VENV");
  const std::string python = std::string(env ? env : "/opt/attnbench/reference-venv") + "/bin/python";
  if (!std::filesystem::exists(python)) {
    testing::skip_test("no reference environment at " + python + " (scripts/setup.sh makes it, with transformers)");
    return;
  }
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("attnbench-decoder-ref-{}", ::getpid());
  for (const char* family : {"gpt2", "llama"}) {
    INFO(family);
    const auto out = dir / family;
    const std::string cmd = fmt::format("{} {}/scripts/decoder_reference.py --family {} --out {} > {}/log.txt 2>&1",
                                        python, ATTNBENCH_SOURCE_DIR, family, out.string(), dir.string());
    std::filesystem::create_directories(dir);
    const int rc = std::system(cmd.c_str());
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 3) {
      testing::skip_test(fmt::format("transformers is not importable by {}", python));
      return;
    }
    REQUIRE(rc == 0);
    std::ifstream in(out / "reference.json");
    const auto ref = nlohmann::json::parse(in);
    model_config mc = testing::tiny_decoder(std::string(family) == "gpt2" ? model_family::gpt2 : model_family::llama);
    mc.kv_heads = ref["kv_heads"].get<int64_t>();
    mc.ffn = ref["ffn"].get<int64_t>();
    mc.max_positions = ref["max_positions"].get<int64_t>();
    DecoderLM m(mc);
    const safetensors_file file((out / "model.safetensors").string());
    load_decoder_weights(m, file);
    m->eval();
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> rows;
    for (const auto& p : ref["prompts"]) rows.push_back(torch::tensor(p.get<std::vector<int64_t>>(), torch::kLong));
    const auto prompt = torch::stack(rows);
    std::vector<torch::Tensor> token_rows;
    for (const auto& t : ref["tokens"]) token_rows.push_back(torch::tensor(t.get<std::vector<int64_t>>(), torch::kLong));
    const auto want = torch::stack(token_rows);
    const generation g = generate_greedy(m, prompt, want.size(1), torch::kFloat);
    CHECK(torch::equal(g.tokens, want));
    const auto flat = ref["logits"].get<std::vector<std::vector<std::vector<float>>>>();
    std::vector<torch::Tensor> seqs;
    for (const auto& s : flat) {
      std::vector<torch::Tensor> steps;
      for (const auto& v : s) steps.push_back(torch::tensor(v));
      seqs.push_back(torch::stack(steps));
    }
    const auto hf_logits = torch::stack(seqs);
    const auto ours = teacher_forced_logits(m, prompt, want, torch::kFloat);
    REQUIRE(ours.sizes() == hf_logits.sizes());
    CHECK(rel_l2(ours, hf_logits) <= 1e-4);
  }
  std::filesystem::remove_all(dir);
}
