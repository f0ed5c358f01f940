// Serves a metrics registry at GET /metrics (Prometheus text exposition format) from a thread of
// its own, over cpp-httplib (Debian's libcpp-httplib-dev). Only this file pair sees httplib: its
// header is heavy and pulls in OpenSSL's.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "monitor/metrics_registry.hpp"

namespace httplib {
class Server;
}

namespace attnbench {

class metrics_server {
 public:
  // Listens on address:port before returning, so a scrape may come at once. Throws input_error
  // with path `option` (the flag that chose the port) when it cannot: port in use, address not
  // local, permission. The registry must outlive the server.
  metrics_server(metrics_registry& registry, const std::string& address, int port, const std::string& option);
  ~metrics_server();  // stops listening and joins the thread
  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  const std::string& address() const { return address_; }
  int port() const { return port_; }

 private:
  std::string address_;
  int port_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

// One HTTP GET with httplib's client, for tests and the hold-time log: status 0 when nothing
// answered.
struct http_response {
  int status = 0;
  std::string content_type;
  std::string body;
};
http_response http_get(const std::string& host, int port, const std::string& path);

// The Content-Type of the text exposition format.
inline constexpr const char* prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace attnbench
