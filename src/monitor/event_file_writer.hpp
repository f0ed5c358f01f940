// TensorBoard scalars without TensorFlow: an events file of TFRecord records (length, masked
// CRC32C of the length, an Event protocol buffer, masked CRC32C of it), the Event and Summary
// messages hand-encoded with only the fields a scalar needs. `tensorboard --logdir` reads them
// beside the profiler's traces (README "Live monitoring").
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>

namespace attnbench {

// CRC-32C (Castagnoli), and TFRecord's mask of it: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t crc32c(const void* data, std::size_t n);
uint32_t masked_crc32c(const void* data, std::size_t n);

// One record in TFRecord framing.
std::string tfrecord(const std::string& payload);
// The serialized Event{wall_time, step, summary{value{tag, simple_value}}}, and the first event
// of a file, Event{wall_time, file_version: "brain.Event:2"}.
std::string scalar_event(double wall_time, int64_t step, const std::string& tag, float value);
std::string file_version_event(double wall_time);

class event_file_writer {
 public:
  // Creates `dir` and in it events.out.tfevents.<seconds>.<host>.<pid>.attnbench (TensorBoard
  // reads every file whose name holds "tfevents"). Throws input_error naming `option` when the
  // file cannot be created.
  event_file_writer(const std::filesystem::path& dir, const std::string& option);
  ~event_file_writer();
  event_file_writer(const event_file_writer&) = delete;
  event_file_writer& operator=(const event_file_writer&) = delete;

  // Appends one scalar and flushes, so a TensorBoard watching the run sees it at once.
  // Thread-safe; a write error is ignored (monitoring never fails a run).
  void add_scalar(const std::string& tag, double value, int64_t step);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write(const std::string& payload);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::mutex mutex_;
};

}  // namespace attnbench
