// The training progress line on stderr: "[=====>    ] 12/60 reward 0.41 kl 0.013 12.3s/it ETA 9m50s".
// Redrawn in place on a terminal; on a pipe or file one plain line per update (at most every
// `min_interval_s`).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace realign::train {

class ProgressBar {
 public:
  // `first` is the step a resumed run starts from (ETA counts only the steps this process ran).
  ProgressBar(std::string label, int64_t total, int64_t first = 0, std::FILE* out = stderr, bool tty = false,
              double min_interval_s = 0);
  // After step `step` (1-based, <= total): fields such as {"reward", 0.41}.
  void update(int64_t step, const std::vector<std::pair<std::string, double>>& fields);
  void finish();  // ends the in-place line on a terminal

  // The text of one update (without carriage return / newline), for tests.
  std::string render(int64_t step, const std::vector<std::pair<std::string, double>>& fields,
                     double elapsed_s) const;

 private:
  std::string label_;
  int64_t total_, first_;
  std::FILE* out_;
  bool tty_;
  double min_interval_s_;
  std::chrono::steady_clock::time_point start_;
  double last_print_s_ = -1e9;
  bool open_line_ = false;
};

// isatty(fileno(stderr)).
bool stderr_is_tty();
// "9m50s", "1h02m", "12.3s".
std::string format_duration(double seconds);

}  // namespace realign::train
