// The root "scenario" and the blocks only one scenario reads: `server` (requests at offered rates
// or from a trace) and `train` (the optimiser of training steps).
#include <fmt/format.h>

#include <algorithm>

#include "config/config_defaults.hpp"
#include "config/decoder_presets.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::shared_ptr<const block_schema> server_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "The server scenario: requests arriving at each offered rate (or from a trace), answered in batches";
  b->keys = {
      array_key("rates", number_key("", "Requests per second").above(0),
                "Offered rates in requests/s (required unless trace is given)")
          .with({{"minItems", 1}}),
      integer_key("requests", "Requests per rate").at_least(1).by_default(defaults::server_requests),
      number_key("max_time_s", "Seconds per rate at most").above(0).by_default(defaults::server_max_time_s),
      number_key("latency_bound_ms", "The p99 latency a rate must meet, in milliseconds").above(0).is_required(),
      integer_key("seed", "Arrival seed").at_least(0).by_default(defaults::workload_seed),
      string_key("trace", "A file of arrival times instead of rates; relative to the config file"),
  };
  return b;
}

std::shared_ptr<const block_schema> train_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "The train scenario: AdamW steps on a classification loss";
  b->keys = {
      number_key("learning_rate", "AdamW's learning rate").above(0).by_default(defaults::learning_rate),
      number_key("weight_decay", "AdamW's weight decay").at_least(0).by_default(defaults::weight_decay),
      number_key("dropout", "Dropout probability; 0 lets variants be compared exactly")
          .at_least(0)
          .below(1)
          .by_default(defaults::dropout),
      integer_key("seed", "Label and mask seed").at_least(0).by_default(defaults::train_seed),
  };
  return b;
}

std::shared_ptr<const block_schema> generate_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "The generate scenario: each prompt prefilled, then tokens decoded greedily against a KV cache";
  b->keys = {
      integer_key("max_new_tokens", "Tokens generated after each prompt (llama-bench's tg)")
          .at_least(1)
          .by_default(defaults::max_new_tokens),
  };
  return b;
}

void config_reader::read_generate() {
  generate_config& gc = cfg_.generate;
  gc.max_new_tokens = defaults::max_new_tokens;
  object_reader g = root_.object("generate");
  const bool decoder = cfg_.model.family != model_family::bert;
  // A decoder generates in the generate scenario (every prompt at once) and in the server
  // scenario (requests arriving over time, runner/generate_server.hpp).
  const bool generating = decoder && (cfg_.scenario == "generate" || cfg_.scenario == "server");
  if (g.present() && !generating)
    root_.add("generate", "only used with \"scenario\": \"generate\", or \"server\" with a decoder model");
  g.check_keys();
  assign(gc.max_new_tokens, g.integer("max_new_tokens"));
  if (cfg_.scenario == "generate" && !decoder)
    root_.add("scenario", "\"generate\" needs a decoder: model.family \"gpt2\" or \"llama\" (or a decoder preset "
                          "such as \"gpt2-tiny\")");
  if (decoder && !generating)
    root_.add("scenario", fmt::format("a {} decoder runs in the \"generate\" and \"server\" scenarios only; {} runs "
                                      "the encoder classifier",
                                      to_string(cfg_.model.family), quote(cfg_.scenario)));
  // Every prompt and its new tokens must fit the learned positions (gpt2) or the cache bound.
  if (generating && cfg_.workload.max_length > 0 &&
      cfg_.workload.max_length + gc.max_new_tokens > cfg_.model.max_positions)
    root_.add(g.present() && g.has("max_new_tokens") ? "generate.max_new_tokens" : "workload.max_length",
              fmt::format("workload.max_length ({}) + generate.max_new_tokens ({}) is more than model.max_positions "
                          "({}): the longest prompt could not be decoded to the end",
                          cfg_.workload.max_length, gc.max_new_tokens, cfg_.model.max_positions));
}

void config_reader::read_scenario() {
  assign(cfg_.scenario, root_.choice("scenario"));
  read_generate();
  // Training builds its own models from the seed, with a classifier head to take a loss from.
  if (cfg_.scenario == "train" && (!cfg_.model.torchscript.empty() || !cfg_.model.weights.empty()))
    root_.add("scenario", fmt::format("\"train\" runs the built-in encoder with seeded weights; model.{} is "
                                      "not supported there",
                                      cfg_.model.torchscript.empty() ? "weights" : "torchscript"));
  read_train();
  object_reader srv = root_.object("server");
  if (cfg_.scenario != "server") {
    if (srv.present()) root_.add("server", "only used with \"scenario\": \"server\"");
    return;
  }
  if (!srv.present()) {
    root_.require("server", "required for \"scenario\": \"server\"");
    return;
  }
  srv.check_keys();
  server_config& sc = cfg_.server;
  sc.requests = defaults::server_requests;
  sc.max_time_s = defaults::server_max_time_s;
  sc.seed = defaults::workload_seed;
  assign(sc.requests, srv.integer("requests"));
  assign(sc.max_time_s, srv.number("max_time_s"));
  srv.require("latency_bound_ms");
  assign(sc.latency_bound_ms, srv.number("latency_bound_ms"));
  assign(sc.seed, srv.unsigned_integer("seed"));
  if (auto trace = srv.string("trace")) {
    fs::path resolved = *trace;
    if (resolved.is_relative()) resolved = fs::path(cfg_.source_path).parent_path() / resolved;
    sc.trace = resolved.string();
    if (auto why = unreadable_reason(resolved)) srv.add("trace", *why);
    if (srv.has("rates")) srv.add("rates", "not allowed with server.trace: the trace sets the arrivals");
    return;
  }
  const ordered_json* rates = srv.find("rates");
  if (!rates) {
    srv.require("rates", "required unless server.trace is given");
    return;
  }
  if (!rates->is_array() || rates->empty()) {
    log_.type_error(srv.path("rates"), "a non-empty array of requests/s", *rates);
    return;
  }
  const key_schema& rate = *srv.spec("rates").items;
  for (size_t i = 0; i < rates->size(); ++i)
    if (auto r = log_.number((*rates)[i], fmt::format("{}[{}]", srv.path("rates"), i), *rate.minimum,
                             rate.exclusive_minimum))
      sc.rates.push_back(*r);
  std::sort(sc.rates.begin(), sc.rates.end());
}

void config_reader::read_train() {
  train_config& tc = cfg_.train;
  tc.learning_rate = defaults::learning_rate;
  tc.weight_decay = defaults::weight_decay;
  tc.dropout = defaults::dropout;
  tc.seed = defaults::train_seed;
  object_reader t = root_.object("train");
  if (t.present() && cfg_.scenario != "train") root_.add("train", "only used with \"scenario\": \"train\"");
  t.check_keys();
  assign(tc.learning_rate, t.number("learning_rate"));
  assign(tc.weight_decay, t.number("weight_decay"));
  if (auto p = t.number("dropout")) {
    if (const double limit = *t.spec("dropout").maximum; *p >= limit)
      t.add("dropout", fmt::format("must be < {}; got {}", limit, *p));
    else
      tc.dropout = *p;
  }
  assign(tc.seed, t.unsigned_integer("seed"));
}

}  // namespace attnbench::config_reading
