// Where a rank of a multi-process run learns who it is: the variables torchrun (and
// `attnbench launch`) set, or SLURM's when started by srun.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace attnbench {

struct rank_env {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;          // index among the ranks on this host: picks cuda:LOCAL_RANK
  std::string master_addr;     // where rank 0 serves the c10d TCPStore
  int master_port = 0;
  std::string source;          // "torchrun" (RANK, WORLD_SIZE, ...) or "slurm" (SLURM_PROCID, ...)
};

inline constexpr int default_master_port = 29500;  // torchrun's default

// nullopt when neither RANK/WORLD_SIZE nor a multi-task SLURM step is present: a single process.
// Throws input_error naming the variable for a malformed or inconsistent value. `getenv` is
// injectable for tests.
std::optional<rank_env> rank_env_from(const std::function<const char*(const char*)>& getenv);
std::optional<rank_env> rank_env_from_process();

}  // namespace attnbench
