#include "train/progress_bar.h"

#include <unistd.h>

#include <cmath>

namespace realign::train {

bool stderr_is_tty() { return isatty(fileno(stderr)) == 1; }

std::string format_duration(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%.1fs", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%dm%02ds", int(s / 60), int(s) % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%dh%02dm", int(s / 3600), int(s / 60) % 60);
  }
  return buf;
}

ProgressBar::ProgressBar(std::string label, int64_t total, int64_t first, std::FILE* out, bool tty,
                         double min_interval_s)
    : label_(std::move(label)),
      total_(total),
      first_(first),
      out_(out),
      tty_(tty),
      min_interval_s_(min_interval_s),
      start_(std::chrono::steady_clock::now()) {}

std::string ProgressBar::render(int64_t step, const std::vector<std::pair<std::string, double>>& fields,
                                double elapsed_s) const {
  std::string line = label_.empty() ? "" : label_ + " ";
  const int width = 20;
  int filled = total_ > 0 ? int(width * step / total_) : width;
  line += "[";
  for (int i = 0; i < width; ++i) line += i < filled ? '=' : (i == filled ? '>' : ' ');
  line += "] " + std::to_string(step) + "/" + std::to_string(total_);
  char buf[64];
  for (const auto& [name, value] : fields) {
    std::snprintf(buf, sizeof(buf), " %s %.4g", name.c_str(), value);
    line += buf;
  }
  int64_t done = step - first_;
  if (done > 0) {
    double per = elapsed_s / double(done);
    line += " " + format_duration(per) + "/it ETA " + format_duration(per * double(total_ - step));
  }
  return line;
}

void ProgressBar::update(int64_t step, const std::vector<std::pair<std::string, double>>& fields) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (!tty_ && step < total_ && elapsed - last_print_s_ < min_interval_s_) return;
  last_print_s_ = elapsed;
  std::string line = render(step, fields, elapsed);
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    open_line_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressBar::finish() {
  if (open_line_) std::fprintf(out_, "\n");
  open_line_ = false;
  std::fflush(out_);
}

}  // namespace realign::train
