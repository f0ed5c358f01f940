// The parent's end of one `attnbench serve` child (cli/serve_protocol.hpp): starts BINARY serve
// CONFIG with pipes on its stdin and stdout (its stderr is ours), checks its greeting, and sends
// one request at a time. A binary that does not speak the protocol is an input_error naming it
// and the option that named it (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

namespace attnbench {

class serve_client {
 public:
  // `option`: "--base" or "--candidate", for messages. Returns once the child said `ready`.
  serve_client(std::string option, std::string binary, const std::string& config_path);
  ~serve_client();  // asks it to quit, then waits; kills it if it does not
  serve_client(const serve_client&) = delete;
  serve_client& operator=(const serve_client&) = delete;

  // Sends one request line, returns the reply's words. Throws std::runtime_error when the child
  // has gone (its exit status in the message).
  std::vector<std::string> request(const std::string& line);

  const std::string& option() const { return option_; }
  const std::string& binary() const { return binary_; }
  const std::string& version() const { return version_; }  // "<harness version> <git commit>"
  int64_t variants() const { return variants_; }
  int64_t samples() const { return samples_; }
  int64_t real_tokens() const { return real_tokens_; }

 private:
  void handshake(const std::string& config_path);  // greeting, protocol version, `ready`
  // The next line from the child; "" with eof_ set when it closed its stdout. timeout_s ≤ 0: none.
  std::string read_line(double timeout_s);
  std::string exit_description();  // "exited with status 2", "was killed by signal 9"

  std::string option_, binary_, version_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_;
  bool eof_ = false;
  bool reaped_ = false;
  int wait_status_ = 0;
  int64_t variants_ = 0, samples_ = 0, real_tokens_ = 0;
};

}  // namespace attnbench
