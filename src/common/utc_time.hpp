// The current time as results files record it.
#pragma once

#include <string>

namespace attnbench {

// Now, ISO 8601 in UTC to the second: "2026-12-02T03:10:00Z".
std::string utc_now_iso();

}  // namespace attnbench
