#include "parallel/rank_env.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"

namespace attnbench {
namespace {

// A whole number in [min, max] from variable `name`, or input_error naming it.
int read_int(const std::function<const char*(const char*)>& getenv, const char* name, int min, int max) {
  const char* text = getenv(name);
  if (!text || !*text) throw input_error(name, "is not set");
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    throw input_error(name, fmt::format("expected a whole number in [{}, {}]; got \"{}\"", min, max, text));
  return static_cast<int>(v);
}

bool has(const std::function<const char*(const char*)>& getenv, const char* name) {
  const char* v = getenv(name);
  return v && *v;
}

}  // namespace

std::optional<rank_env> rank_env_from(const std::function<const char*(const char*)>& getenv) {
  constexpr int most = std::numeric_limits<int>::max();
  rank_env env;
  if (has(getenv, "WORLD_SIZE") || has(getenv, "RANK")) {
    env.source = "torchrun";
    env.world_size = read_int(getenv, "WORLD_SIZE", 1, most);
    env.rank = read_int(getenv, "RANK", 0, env.world_size - 1);
    env.local_rank = has(getenv, "LOCAL_RANK") ? read_int(getenv, "LOCAL_RANK", 0, env.world_size - 1) : env.rank;
  } else if (has(getenv, "SLURM_NTASKS") && read_int(getenv, "SLURM_NTASKS", 1, most) > 1) {
    // srun starts every task of the step with these; a batch script's own shell (one task) does not
    // make a multi-process run.
    env.source = "slurm";
    env.world_size = read_int(getenv, "SLURM_NTASKS", 1, most);
    env.rank = read_int(getenv, "SLURM_PROCID", 0, env.world_size - 1);
    env.local_rank = has(getenv, "SLURM_LOCALID") ? read_int(getenv, "SLURM_LOCALID", 0, env.world_size - 1) : 0;
    if (!has(getenv, "MASTER_ADDR"))
      throw input_error("MASTER_ADDR",
                        "is not set: under srun, export the first node's address, e.g. "
                        "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)");
  } else {
    return std::nullopt;
  }
  if (env.world_size > 1 && !has(getenv, "MASTER_ADDR"))
    throw input_error("MASTER_ADDR", "is not set: every rank needs the address of rank 0's host");
  env.master_addr = has(getenv, "MASTER_ADDR") ? getenv("MASTER_ADDR") : "127.0.0.1";
  env.master_port = has(getenv, "MASTER_PORT") ? read_int(getenv, "MASTER_PORT", 1, 65535) : default_master_port;
  return env;
}

std::optional<rank_env> rank_env_from_process() {
  return rank_env_from([](const char* name) { return std::getenv(name); });
}

}  // namespace attnbench
