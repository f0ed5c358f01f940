// libFuzzer target: a results.json as `attnbench compare` reads it (report/result_json.hpp,
// load_run_result: a run's document, or a sweep's flattened), on arbitrary bytes. It must load or
// throw an input_error; nothing else may escape. What loads must survive being written and read
// back, and the second write must equal the first.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "report/result_json.hpp"

namespace {

// The bytes as a file with no file system under it (a memfd), so the target runs the very reader
// compare does, file handling included, without touching the disk.
class memory_file {
 public:
  memory_file() : fd_(memfd_create("fuzz-results.json", 0)) {
    if (fd_ < 0) __builtin_trap();
  }
  ~memory_file() { close(fd_); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  void write_all(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size)) __builtin_trap();
  }

 private:
  int fd_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static memory_file file;
  file.write_all(data, size);
  try {
    const attnbench::run_result result = attnbench::load_run_result(file.path());
    const auto written = attnbench::run_result_to_json(result);
    const auto again = attnbench::run_result_to_json(attnbench::run_result_from_json(written));
    if (written != again) __builtin_trap();
  } catch (const attnbench::input_error&) {
  }
  return 0;
}
