#include "monitor/metrics_server.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <httplib.h>

#include "common/error.hpp"

namespace attnbench {
namespace {

// Scrapes are rare (one a second at most) and short: two threads serve a scraper and a curl.
constexpr std::size_t server_threads = 2;

}  // namespace

metrics_server::metrics_server(metrics_registry& registry, const std::string& address, int port,
                               const std::string& option)
    : address_(address), port_(port), server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new httplib::ThreadPool(server_threads); };
  // httplib's default sets SO_REUSEPORT, which lets a second process listen on a port already in
  // use (scrapes would then go to either): SO_REUSEADDR alone still allows a quick restart.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->Get("/metrics", [&registry](const httplib::Request&, httplib::Response& res) {
    res.set_content(registry.render(), prometheus_content_type);
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("attnbench: metrics at /metrics\n", "text/plain; charset=utf-8");
  });
  errno = 0;
  if (!server_->bind_to_port(address, port)) {
    const int err = errno;
    throw input_error(option, fmt::format("cannot serve metrics on {}:{}: {}", address, port,
                                          err ? std::strerror(err) : "the address or port is not available"));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() only stops a server that is running: wait until it is, so the destructor cannot miss it.
  // Bounded: a listen that ended at once (never seen running) must not hang the run.
  for (int waited_ms = 0; !server_->is_running() && waited_ms < 5000; ++waited_ms)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

http_response http_get(const std::string& host, int port, const std::string& path) {
  httplib::Client client(host, port);
  client.set_connection_timeout(5);
  const auto res = client.Get(path.c_str());
  if (!res) return {};
  return {res->status, res->get_header_value("Content-Type"), res->body};
}

metrics_server::~metrics_server() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace attnbench
