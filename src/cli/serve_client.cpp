#include "cli/serve_client.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/serve_protocol.hpp"
#include "common/error.hpp"

namespace attnbench {
namespace {

namespace sp = serve_protocol;

// Loading LibTorch and the config on a loaded 2-core machine takes seconds; a binary that says
// nothing for this long is not an attnbench that serves.
constexpr double greeting_timeout_s = 120;
// How long a child that was asked to quit may take before it is killed.
constexpr double quit_timeout_s = 10;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string quoted_excerpt(const std::string& line) {
  constexpr std::size_t most = 120;
  return "\"" + (line.size() > most ? line.substr(0, most) + "…" : line) + "\"";
}

}  // namespace

serve_client::serve_client(std::string option, std::string binary, const std::string& config_path)
    : option_(std::move(option)), binary_(std::move(binary)) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("cannot create pipes: {}", std::strerror(errno)));
  // A child that dies mid-request must be an error message, not a SIGPIPE that ends the parent.
  std::signal(SIGPIPE, SIG_IGN);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(fmt::format("cannot fork: {}", std::strerror(errno)));
  if (pid_ == 0) {
    ::dup2(in[0], STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    std::vector<std::string> args{binary_, "serve", config_path};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(binary_.c_str(), argv.data());
    const std::string why = fmt::format("attnbench ab: cannot start {}: {}\n", binary_, std::strerror(errno));
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, why.data(), why.size());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  try {
    handshake(config_path);
  } catch (...) {
    // The destructor does not run for a half-built object: the child must not outlive it.
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &wait_status_, 0);
      reaped_ = true;
    }
    close_fd(to_child_);
    close_fd(from_child_);
    throw;
  }
}

void serve_client::handshake(const std::string& config_path) {
  const std::string hello = read_line(greeting_timeout_s);
  const auto words = sp::split_words(hello);
  const std::string not_serving =
      "does not speak attnbench's serve protocol: it is not attnbench, or a build older than `attnbench ab` "
      "(such a commit cannot serve; compare it through a stored baseline instead, README \"CI regression runs\")";
  if (eof_)
    throw input_error(option_, fmt::format("{} {} before it said anything ({})", binary_, exit_description(),
                                           not_serving));
  if (hello.empty() && !eof_)
    throw input_error(option_, fmt::format("{} said nothing in {:g} s: it {}", binary_, greeting_timeout_s,
                                           not_serving));
  if (words.empty() || words[0] != sp::greeting)
    throw input_error(option_, fmt::format("{} {}; its first line was {}", binary_, not_serving, quoted_excerpt(hello)));
  if (words.size() < 2 || words[1] != std::to_string(sp::version))
    throw input_error(option_, fmt::format("{} speaks serve protocol version {}, this attnbench speaks {}: build both "
                                           "from commits with the same protocol",
                                           binary_, words.size() >= 2 ? words[1] : "?", sp::version));
  version_ = sp::words_from(words, 2);

  const std::string ready = read_line(0);
  const auto r = sp::split_words(ready);
  if (eof_)
    throw std::runtime_error(fmt::format("{} {}: {} {} while loading {} (its messages are above)", option_, binary_,
                                         binary_, exit_description(), config_path));
  if (!r.empty() && r[0] == "error")
    throw input_error(option_, fmt::format("{} cannot serve {}: {}", binary_, config_path, sp::words_from(r, 1)));
  try {
    if (r.size() != 4 || r[0] != "ready") throw std::invalid_argument("");
    variants_ = std::stoll(r[1]);
    samples_ = std::stoll(r[2]);
    real_tokens_ = std::stoll(r[3]);
  } catch (const std::exception&) {
    throw input_error(option_, fmt::format("{} answered {} where serve protocol {} says \"ready <variants> <samples> "
                                           "<real tokens>\"",
                                           binary_, quoted_excerpt(ready), sp::version));
  }
}

serve_client::~serve_client() {
  if (pid_ <= 0) return;
  if (!eof_ && to_child_ >= 0) {
    const std::string quit = "quit\n";
    [[maybe_unused]] const auto written = ::write(to_child_, quit.data(), quit.size());
  }
  close_fd(to_child_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(quit_timeout_s);
  while (!reaped_) {
    const pid_t got = ::waitpid(pid_, &wait_status_, WNOHANG);
    if (got == pid_ || got < 0) {
      reaped_ = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &wait_status_, 0);
      reaped_ = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  close_fd(from_child_);
}

std::string serve_client::exit_description() {
  if (!reaped_) {
    close_fd(to_child_);
    if (::waitpid(pid_, &wait_status_, 0) == pid_) reaped_ = true;
  }
  if (!reaped_) return "stopped answering";
  if (WIFEXITED(wait_status_)) return fmt::format("exited with status {}", WEXITSTATUS(wait_status_));
  if (WIFSIGNALED(wait_status_)) return fmt::format("was killed by signal {}", WTERMSIG(wait_status_));
  return "stopped";
}

std::string serve_client::read_line(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (eof_) return "";
    int wait_ms = -1;
    if (timeout_s > 0) {
      const auto left = std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return "";
      wait_ms = static_cast<int>(left) + 1;
    }
    pollfd p{from_child_, POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the deadline is tested above
    char chunk[4096];
    const ssize_t got = ::read(from_child_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(got));
  }
}

std::vector<std::string> serve_client::request(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t sent = 0;
  while (!eof_ && sent < text.size()) {
    const ssize_t n = ::write(to_child_, text.data() + sent, text.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  const std::string reply = sent == text.size() ? read_line(0) : "";
  if (reply.empty())
    throw std::runtime_error(fmt::format("the {} build ({}) {} during \"{}\" (its messages are above)", option_.substr(2),
                                         binary_, exit_description(), line));
  auto words = sp::split_words(reply);
  if (words.empty()) throw std::runtime_error(fmt::format("the {} build ({}) sent a blank line", option_.substr(2), binary_));
  if (words[0] == "error")
    throw std::runtime_error(fmt::format("the {} build ({}) refused \"{}\": {}", option_.substr(2), binary_, line,
                                         sp::words_from(words, 1)));
  return words;
}

}  // namespace attnbench
