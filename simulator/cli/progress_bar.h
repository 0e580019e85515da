#pragma once
// A progress line for long commands, on stderr and only when stderr is a terminal (silent when
// redirected, so logs and pipes stay clean): phase, a bar, done/total, rate and time left.
//   screening [##########----------]  51% 120,312/230,616  214k/s  ETA 0.5 s

#include <string>

#include "simulator/run_control.h"

namespace stepcast::cli {

class ProgressBar {
 public:
  ProgressBar();
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // A RunControl whose reports draw this bar (empty callback when stderr is not a terminal).
  [[nodiscard]] RunControl control() const;
  // Clears the line (before the command prints its results).
  void clear() const;

 private:
  bool m_tty = false;
};

}  // namespace stepcast::cli
