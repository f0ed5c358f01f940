// Selects which scaled-dot-product-attention backends LibTorch may use, for one scope.
//
// The backend flags live on at::globalContext() and are process-wide, while attention runs on
// several threads at once (data-parallel workers, pipeline stages). So the flags are owned by one
// process-wide selection, shared by every live guard:
// - the first guard saves the flags and sets its backend's ("auto": leaves them as they were);
// - a guard asking for the backend already selected joins it (threads running the same variant
//   run concurrently, nothing is serialised);
// - a guard asking for another backend waits until every guard of the current one has ended
//   (different backends are serialised: neither can run under the other's flags);
// - the last guard to end restores the saved flags.
// The flags therefore change only while no guarded attention call is running, a forced backend
// never leaks into another call, and "auto" always runs under the flags as they were before any
// guard. A thread that already holds a guard and asks for another backend would wait for itself:
// that is refused with an error instead.
#pragma once

#include <c10/core/Device.h>

#include "config/config.hpp"

namespace attnbench {

class sdpa_backend_guard {
 public:
  sdpa_backend_guard(sdpa_backend backend, c10::Device device);
  ~sdpa_backend_guard();
  sdpa_backend_guard(const sdpa_backend_guard&) = delete;
  sdpa_backend_guard& operator=(const sdpa_backend_guard&) = delete;
};

// For tests: the backend the live guards hold and how many there are (0: none; the flags are the
// saved ones).
struct sdpa_selection_state {
  sdpa_backend backend = sdpa_backend::auto_select;
  int holders = 0;
};
sdpa_selection_state current_sdpa_selection();

}  // namespace attnbench
