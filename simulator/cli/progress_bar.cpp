#include "simulator/cli/progress_bar.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "simulator/quantity_parse.h"

namespace stepcast::cli {

namespace {

std::string rate_text(double per_second) {
  if (per_second >= 1e6) return fmt::format("{:.1f}M/s", per_second / 1e6);
  if (per_second >= 1e3) return fmt::format("{:.0f}k/s", per_second / 1e3);
  return fmt::format("{:.0f}/s", per_second);
}

void draw(const Progress& p) {
  constexpr int kWidth = 20;
  const double fraction = p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 0.0;
  const int filled = static_cast<int>(fraction * kWidth + 0.5);
  const double rate = p.elapsed_s > 0.0 ? static_cast<double>(p.done) / p.elapsed_s : 0.0;
  std::string eta = "";
  if (rate > 0.0 && p.done < p.total) eta = fmt::format("  ETA {:.1f} s", static_cast<double>(p.total - p.done) / rate);
  const std::string line = fmt::format("\r{} [{}{}] {:3.0f}% {}/{}  {}{}\033[K", p.phase, std::string(static_cast<std::size_t>(filled), '#'),
                                       std::string(static_cast<std::size_t>(kWidth - filled), '-'), fraction * 100.0,
                                       thousands(p.done), thousands(p.total), rate_text(rate), eta);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

ProgressBar::ProgressBar() : m_tty(isatty(fileno(stderr)) != 0) {}

ProgressBar::~ProgressBar() { clear(); }

RunControl ProgressBar::control() const {
  RunControl c;
  if (m_tty) c.on_progress = draw;
  return c;
}

void ProgressBar::clear() const {
  if (!m_tty) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

}  // namespace stepcast::cli
