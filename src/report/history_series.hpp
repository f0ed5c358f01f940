// Series of the results history (report/history_db.hpp) and the noise band `history check` tests
// a point against. A series is one config (name and hash) on one machine (CPU identity, device,
// threads) for one variant: a change of machine starts a new series, never a regression.
//
// The band (README "CI regression runs"): over the series' earlier points (the last `window`
// PASS points with a throughput), centre = the median of their log throughputs, spread = 1.4826 ×
// their median absolute deviation from it (the MAD scaled to a normal's standard deviation: robust
// to the odd outlier run), half-width w = max(k × spread, floor) with k = 3 and floor = 2%. A point
// is BELOW when log(throughput) < centre − w, ABOVE when > centre + w, else IN; with fewer than
// min_points earlier points there is no band (n/a).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/history_db.hpp"

namespace attnbench {

namespace history_defaults {
inline constexpr int64_t window = 20;     // earlier points the band is computed from: recent behaviour
inline constexpr int64_t min_points = 3;  // fewer give no meaningful spread (a MAD of 2 is half their gap)
inline constexpr double k = 3.0;          // 3 robust standard deviations: ~0.3% false flags under normal noise
inline constexpr double floor = 0.02;     // ±2%: a series of near-identical runs must not flag a 0.5% wobble
}  // namespace history_defaults

struct history_band {
  bool defined = false;  // false: fewer than min_points earlier points
  int64_t points = 0;    // earlier points it was computed from
  double centre = not_a_number;  // samples/s (exp of the median log)
  double low = not_a_number;     // samples/s
  double high = not_a_number;
  double half_width = not_a_number;  // w, on the log scale (≈ relative)
};

enum class band_position { in, below, above, unknown };
std::string to_string(band_position p);  // "IN", "BELOW", "ABOVE", "n/a"

// The band from earlier points' throughputs (samples/s; non-finite values ignored).
history_band band_of(const std::vector<double>& earlier, int64_t window = history_defaults::window,
                     int64_t min_points = history_defaults::min_points, double k = history_defaults::k,
                     double floor = history_defaults::floor);
band_position position_in(const history_band& band, double samples_per_s);

struct history_series {
  std::string config_name, config_hash, cpu_identity, device;
  int64_t threads = 0;
  std::string variant;
  std::vector<history_point> points;  // oldest first
  std::string label() const;          // "ci · AMD EPYC 7B13 (…) · cpu, 1 thread · config 1a2b3c4d"
  std::string group_key() const;      // everything but the variant: one machine-and-config series group
};

// Groups points (oldest first, as history_db::points returns them) into series, in order of first appearance.
std::vector<history_series> series_of(const std::vector<history_point>& points);

// One checked point: the newest of its series, against the band of the earlier ones.
struct history_check_row {
  const history_series* series = nullptr;
  const history_point* point = nullptr;
  history_band band;
  band_position position = band_position::unknown;
};
std::vector<history_check_row> check_series(const std::vector<history_series>& series);

// `history show`: a trend table per series group, each point's band position beside it.
std::string history_markdown(const std::vector<history_series>& series);
// `history check`: one line per series' newest point.
std::string history_check_markdown(const std::vector<history_check_row>& rows);
// `history html`: a self-contained page (report/html_page.hpp): per series group a trend chart of
// every variant's throughput with its intervals (points outside the band marked), and the tables.
std::string history_html(const std::vector<history_series>& series, const std::string& db_path);

}  // namespace attnbench
