#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "model/safetensors_builder.hpp"
#include "test_support.hpp"
#include "workload/bpe_tokenizer.hpp"

using namespace attnbench;
using Catch::Contains;
using json = nlohmann::json;

namespace {

const std::string shipped = std::string(ATTNBENCH_SOURCE_DIR) + "/configs/data/handbook-bpe.json";
const std::string corpus = std::string(ATTNBENCH_SOURCE_DIR) + "/configs/data/handbook-corpus.txt";
const std::string fixture = std::string(ATTNBENCH_TEST_DATA_DIR) + "/workload/fixtures/bpe_reference.json";

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> corpus_lines() {
  std::ifstream in(corpus, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What GPT-2's split and the byte map must get right beyond prose: scripts/corpus_bpe.py's HARD,
// which the committed fixture holds with 40 corpus lines (its "lines"), read from there.
std::vector<std::string> hard_strings() {
  const auto ref = json::parse(read_all(fixture));
  std::vector<std::string> out;
  for (const auto& l : ref.at("lines")) out.push_back(l.get<std::string>());
  return out;
}

// A minimal byte-level BPE tokenizer.json: the 256 byte symbols, one merge ("a b"), one added
// token; `edit` changes it before it is read.
json tiny_doc() {
  json vocab = json::object();
  vocab["<|endoftext|>"] = 0;
  int64_t id = 1;
  for (const char* s : {"a", "b", "ab", "Ġ"}) vocab[s] = id++;
  return {{"added_tokens", json::array({{{"id", 0}, {"content", "<|endoftext|>"}, {"special", true}}})},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr},
            {"byte_fallback", false},
            {"vocab", vocab},
            {"merges", json::array({json::array({"a", "b"})})}}}};
}

std::string refusal_of(const json& doc) {
  try {
    bpe_tokenizer::from_json_text(doc.dump(), "tok.json");
  } catch (const input_error& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("BPE: GPT-2's split of whitespace runs, contractions, digits and symbols",
          "[workload][tokenizer][bpe]") {
  const auto t = bpe_tokenizer::from_file(shipped);
  using v = std::vector<std::string>;
  // Each expectation is what `tokenizers`' ByteLevel pre-tokenizer gives (before the byte map).
  CHECK(t.pre_tokens("I'm  here 123") == v{"I", "'m", " ", " here", " 123"});
  CHECK(t.pre_tokens("a   b") == v{"a", "  ", " b"});  // the run less its last space, which joins "b"
  CHECK(t.pre_tokens("x  ") == v{"x", "  "});          // a trailing run whole
  CHECK(t.pre_tokens("\n\nx") == v{"\n", "\n", "x"});
  CHECK(t.pre_tokens("it's DON'T we'll") ==
        v{"it", "'s", " DON", "'", "T", " we", "'ll"});  // lower case only
  CHECK(t.pre_tokens("4567.89") == v{"4567", ".", "89"});
  CHECK(t.pre_tokens("日本語のテキストです。") == v{"日本語のテキストです", "。"});
  CHECK(t.pre_tokens("emoji 🙂👍🏽!") == v{"emoji", " 🙂👍🏽!"});
  CHECK(t.pre_tokens("x²½ Ⅻ") == v{"x", "²½", " Ⅻ"});  // No and Nl are numbers
  CHECK(t.pre_tokens("").empty());
  CHECK_THROWS_WITH(t.pre_tokens("caf\xE9"), Contains("not valid UTF-8 (byte 3)"));
}

TEST_CASE("BPE: the shipped tokenizer's ids decode to the text, for every corpus line and hard strings",
          "[workload][tokenizer][bpe]") {
  const auto t = bpe_tokenizer::from_file(shipped);
  CHECK(t.vocab_size() == 4096);
  // Ids `tokenizers` gives (scripts/corpus_bpe.py's tokenizer, checked with Tokenizer.encode).
  CHECK(t.encode("Debian") == std::vector<int64_t>{1844});
  CHECK(t.encode(" the") == std::vector<int64_t>{299});
  CHECK(t.encode("Hello world") == std::vector<int64_t>{40, 69, 331, 79, 2603, 1501});
  // An added token in the text is its characters, never id 0.
  CHECK(t.encode("<|endoftext|>") == std::vector<int64_t>{28, 92, 2102, 70, 3989, 92, 30});
  CHECK(t.encode("").empty());
  std::vector<std::string> texts = corpus_lines();
  REQUIRE(texts.size() == 2400);
  const std::vector<std::string> hard = hard_strings();
  REQUIRE(hard.size() >= 20);
  texts.insert(texts.end(), hard.begin(), hard.end());
  int64_t tokens = 0;
  for (const auto& s : texts) {
    const auto ids = t.encode(s);
    tokens += static_cast<int64_t>(ids.size());
    if (t.decode(ids) != s) FAIL_CHECK("round trip changed: " << s);
  }
  // Merges happened: the corpus is far fewer tokens than bytes (prose in four languages).
  CHECK(tokens < 2400 * 200);
}

TEST_CASE("BPE decode: added tokens as written, a cut character as U+FFFD, an unknown id refused",
          "[workload][tokenizer][bpe]") {
  const auto t = bpe_tokenizer::from_file(shipped);
  CHECK(t.decode({0}) == "<|endoftext|>");
  // 日 is three bytes with no merge among them in this vocabulary: [163, 246, 99] (æ Ĺ ¥), as
  // `tokenizers` encodes it. Cut after one or two bytes it decodes, as there, to one U+FFFD.
  const auto ids = t.encode("日");
  REQUIRE(ids == std::vector<int64_t>{163, 246, 99});
  CHECK(t.decode({ids[0]}) == "\uFFFD");
  CHECK(t.decode({ids[0], ids[1]}) == "\uFFFD");
  CHECK(t.decode({ids[0], ids[1], 69}) == "\uFFFDe");   // then ASCII: the subpart ends before it
  CHECK(t.decode({ids[1], ids[2]}) == "\uFFFD\uFFFD");  // lone continuation bytes: one each
  CHECK(t.decode(ids) == "日");
  CHECK_THROWS_WITH(t.decode({4096}), Contains("no token has id 4096"));
}

TEST_CASE("BPE: the lowest-ranked merge first, merges as \"a b\" or pairs, prefix space",
          "[workload][tokenizer][bpe]") {
  json doc = tiny_doc();
  const auto pairs = bpe_tokenizer::from_json_text(doc.dump(), "tiny");
  // "aab": a a b → a ab (the one merge); " ab" with a prefix space → Ġ ab.
  CHECK(pairs.encode("aab") == std::vector<int64_t>{1, 3});
  CHECK(pairs.encode(" ab") == std::vector<int64_t>{4, 3});
  doc["model"]["merges"] = json::array({"a b"});
  CHECK(bpe_tokenizer::from_json_text(doc.dump(), "tiny").encode("aab") == std::vector<int64_t>{1, 3});
  doc["pre_tokenizer"]["add_prefix_space"] = true;
  CHECK(bpe_tokenizer::from_json_text(doc.dump(), "tiny").encode("ab") == std::vector<int64_t>{4, 3});
  // A byte the vocabulary lacks, and no unk_token: refused, naming the file.
  CHECK_THROWS_WITH(pairs.encode("c"), Contains("tiny: no token for \"c\" and no model.unk_token"));
}

TEST_CASE("BPE: an unsupported tokenizer.json is refused, naming the file and the key",
          "[workload][tokenizer][bpe]") {
  struct refusal {
    std::function<void(json&)> edit;
    std::string message;
  };
  const std::vector<refusal> refusals{
      {[](json& d) { d["model"]["type"] = "WordPiece"; },
       "tok.json: key model.type: \"WordPiece\" is not implemented"},
      {[](json& d) { d["model"]["type"] = "Unigram"; },
       "tok.json: key model.type: \"Unigram\" is not implemented"},
      {[](json& d) {
         d["pre_tokenizer"] = {{"type", "Metaspace"}};
       },
       "tok.json: key pre_tokenizer.type: \"Metaspace\" is not implemented: only ByteLevel (GPT-2's); a "
       "Metaspace "
       "file is a SentencePiece tokenizer"},
      {[](json& d) { d.erase("pre_tokenizer"); }, "tok.json: key pre_tokenizer: missing"},
      {[](json& d) {
         d["normalizer"] = {{"type", "NFC"}};
       },
       "tok.json: key normalizer: \"NFC\" is not implemented"},
      {[](json& d) { d["model"]["byte_fallback"] = true; },
       "tok.json: key model.byte_fallback: byte fallback"},
      {[](json& d) { d["model"]["dropout"] = 0.1; },
       "tok.json: key model.dropout: BPE dropout is not implemented"},
      {[](json& d) { d["model"]["continuing_subword_prefix"] = "##"; },
       "tok.json: key model.continuing_subword_prefix: not implemented"},
      {[](json& d) { d["model"]["end_of_word_suffix"] = "</w>"; },
       "tok.json: key model.end_of_word_suffix: not implemented"},
      {[](json& d) {
         d["post_processor"] = {{"type", "TemplateProcessing"}};
       },
       "tok.json: key post_processor.type: \"TemplateProcessing\" is not implemented (it adds special "
       "tokens"},
      {[](json& d) {
         d["decoder"] = {{"type", "WordPiece"}};
       },
       "tok.json: key decoder.type: \"WordPiece\" is not implemented"},
      {[](json& d) { d["model"]["merges"] = json::array({"a  b"}); },
       "tok.json: key model.merges[0]: \"a  b\" is not two tokens separated by one space"},
      {[](json& d) {
         d["model"]["merges"] = json::array({json::array({"a", "c"})});
       },
       "tok.json: key model.merges[0]: \"c\" is not in model.vocab"},
      {[](json& d) { d["model"]["vocab"]["x"] = -1; },
       "tok.json: key model.vocab: the id of \"x\" is not a non-negative integer"},
      {[](json& d) { d["model"]["unk_token"] = "<unk>"; },
       "tok.json: key model.unk_token: \"<unk>\" is not in model.vocab"},
      {[](json& d) {
         d["added_tokens"] = json::array({{{"content", "x"}}});
       },
       "tok.json: key added_tokens[0]: expected"},
      {[](json& d) { d.erase("model"); }, "tok.json: key model: missing"},
  };
  CHECK(refusal_of(tiny_doc()) == "(accepted)");
  for (std::size_t i = 0; i < refusals.size(); ++i) {
    json doc = tiny_doc();
    refusals[i].edit(doc);
    INFO("refusal " << i);
    CHECK_THAT(refusal_of(doc), Catch::StartsWith(refusals[i].message));
  }
  CHECK_THROWS_WITH(bpe_tokenizer::from_json_text("{not json", "tok.json"),
                    "tok.json: not a JSON object (a Hugging Face tokenizer.json)");
  CHECK_THROWS_WITH(bpe_tokenizer::from_file("/nonexistent/tokenizer.json"),
                    "/nonexistent/tokenizer.json: cannot read the tokenizer");
}

// The committed fixture: Hugging Face's ids for the shipped tokenizer in its three forms, made by
// scripts/corpus_bpe.py fixture (its "generated_by" says how, "tokenizers" with which version).
TEST_CASE("BPE ids equal Hugging Face tokenizers' on the committed reference strings",
          "[workload][tokenizer][bpe]") {
  const auto ref = json::parse(read_all(fixture));
  const std::string bytes = read_all(shipped);
  fnv1a64 h;
  h.update(bytes);
  INFO("the fixture was made from another tokenizer file: rerun " << ref["generated_by"].get<std::string>());
  REQUIRE(ref["tokenizer_fnv1a64"].get<std::string>() == h.hex());
  const auto& lines = ref["lines"];
  REQUIRE(lines.size() >= 50);
  json doc = json::parse(bytes);
  json strings = doc;
  strings["model"]["merges"] = json::array();
  for (const auto& m : doc["model"]["merges"])
    strings["model"]["merges"].push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
  json prefix = doc;
  prefix["pre_tokenizer"]["add_prefix_space"] = true;
  const std::vector<std::pair<std::string, bpe_tokenizer>> forms{
      {"pairs", bpe_tokenizer::from_json_text(bytes, shipped)},
      {"strings", bpe_tokenizer::from_json_text(strings.dump(), "strings")},
      {"prefix", bpe_tokenizer::from_json_text(prefix.dump(), "prefix")}};
  for (const auto& [name, t] : forms) {
    const auto& want = ref["ids"][name];
    REQUIRE(want.size() == lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      INFO(name << " line " << i << ": " << lines[i].get<std::string>());
      CHECK(t.encode(lines[i].get<std::string>()) == want[i].get<std::vector<int64_t>>());
    }
  }
}

// Live: scripts/corpus_bpe.py trains the tokenizer again with the reference environment's
// `tokenizers` and encodes the corpus's first 400 lines (100 a language; all 2400 were checked by
// hand, at 4 s) and its hard strings; attnbench must give the same ids for all three forms, and
// with the version the shipped file was made with, the same file.
TEST_CASE("BPE ids equal tokenizers' live on corpus lines, and training reproduces the shipped file",
          "[workload][tokenizer][bpe][reference]") {
  const char* env = std::getenv("ATTNBENCH_REFERENCE_VENV");
  const std::string python = std::string(env ? env : "/opt/attnbench/reference-venv") + "/bin/python";
  if (!std::filesystem::exists(python)) {
    testing::skip_test("no reference environment at " + python +
                       " (scripts/setup.sh makes it, with tokenizers)");
    return;
  }
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("attnbench-bpe-ref-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string cmd = fmt::format(
      "{} {}/scripts/corpus_bpe.py reference --corpus {} --vocab-size 4096 --lines 400 --out {} > {}/log.txt 2>&1",
      python, ATTNBENCH_SOURCE_DIR, corpus, dir.string(), dir.string());
  const int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 3) {
    std::filesystem::remove_all(dir);
    testing::skip_test(fmt::format("tokenizers is not importable by {}", python));
    return;
  }
  INFO(read_all((dir / "log.txt").string()));
  REQUIRE(rc == 0);
  const auto ref = json::parse(read_all((dir / "reference.json").string()));
  const auto& lines = ref["lines"];
  REQUIRE(lines.size() == 400 + 20);
  for (const char* name : {"pairs", "strings", "prefix"}) {
    const auto t = bpe_tokenizer::from_file((dir / (std::string(name) + ".json")).string());
    const auto& want = ref["ids"][name];
    REQUIRE(want.size() == lines.size());
    int64_t differ = 0;
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (t.encode(lines[i].get<std::string>()) != want[i].get<std::vector<int64_t>>()) {
        if (++differ <= 5) FAIL_CHECK(name << " line " << i << ": " << lines[i].get<std::string>());
      }
    CHECK(differ == 0);
  }
  const auto committed = json::parse(read_all(fixture));
  if (ref["tokenizers"] == committed["tokenizers"])
    CHECK(read_all((dir / "pairs.json").string()) == read_all(shipped));
  else
    WARN("tokenizers " << ref["tokenizers"] << " here, " << committed["tokenizers"]
                       << " made the shipped file: not compared byte for byte");
  std::filesystem::remove_all(dir);
}
