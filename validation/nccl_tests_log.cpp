#include "validation/nccl_tests_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "simulator/diagnostics.h"

namespace stepcast {

namespace {

constexpr std::string_view kBeginRaw = "# ---- BEGIN RAW";
constexpr std::string_view kEndRaw = "# ---- END RAW";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

// Removes a launcher's rank prefix: "0: ", " 12: " (srun -l), "[0] " (mpirun --tag-output style).
std::string_view strip_rank_prefix(std::string_view line) {
  std::string_view s = line;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  std::size_t digits = 0;
  if (!s.empty() && s.front() == '[') {
    std::size_t i = 1;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i > 1 && i < s.size() && s[i] == ']') return s.substr(i + 1);
    return line;
  }
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits > 0 && digits < s.size() && s[digits] == ':' &&
      (digits + 1 == s.size() || s[digits + 1] == ' ' || s[digits + 1] == '\t')) {
    return s.substr(digits + 1);
  }
  return line;
}

template <class T>
bool parse_integer(std::string_view s, T& out, bool allow_underscores = false) {
  std::string digits;
  if (allow_underscores) {
    for (char c : s) {
      if (c != '_') digits += c;
    }
    s = digits;
  }
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool parse_number(std::string_view s, double& out) {
  if (s.empty()) return false;
  const std::string copy(s);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && std::isfinite(out);
}

bool is_integer(std::string_view s) {
  long long v = 0;
  return parse_integer(s, v);
}

bool starts_alpha(std::string_view s) { return !s.empty() && std::isalpha(static_cast<unsigned char>(s.front())); }

// The layout of the result columns, from the column header or the first row.
struct Layout {
  bool known = false;
  bool reduced = false;  // size time algbw busbw
  bool root = true;      // a `root` column after `redop`
  bool check = true;     // a #wrong / error column after each busbw
  int groups = 2;        // measurement groups: out-of-place and in-place
  [[nodiscard]] int prefix() const { return root ? 5 : 4; }
  [[nodiscard]] int per_group() const { return check ? 4 : 3; }
  [[nodiscard]] int width() const { return reduced ? 4 : prefix() + groups * per_group(); }
};

// A column header line: "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ...".
std::optional<Layout> layout_from_header(const std::vector<std::string_view>& words) {
  std::vector<std::string_view> w;
  for (auto x : words) {
    if (x != "#") w.push_back(x);
  }
  if (w.empty() || (w[0] != "size" && w[0] != "#size")) return std::nullopt;
  Layout layout;
  layout.known = true;
  const auto has = [&w](std::string_view name) { return std::find(w.begin(), w.end(), name) != w.end(); };
  if (!has("count") && has("time") && has("busbw")) {
    layout.reduced = true;
    return layout;
  }
  if (!has("time")) return std::nullopt;
  layout.root = has("root");
  layout.check = has("#wrong") || has("error") || has("wrong");
  layout.groups = static_cast<int>(std::count(w.begin(), w.end(), std::string_view("time")));
  if (layout.groups < 1 || layout.groups > 2) return std::nullopt;
  return layout;
}

Layout layout_from_width(std::size_t width) {
  Layout layout;
  layout.known = true;
  switch (width) {
    case 13: break;                                      // root, both groups, check
    case 12: layout.root = false; break;                 // no root, both groups, check
    case 11: layout.check = false; break;                // root, both groups, no check
    case 9: layout.groups = 1; break;                    // root, out-of-place, check
    case 8: layout.groups = 1; layout.check = false; break;
    default: layout.known = false; break;
  }
  return layout;
}

}  // namespace

std::optional<CollectiveOp> collective_op_from_name(std::string_view name) {
  std::string n(trim(name));
  const auto pos = n.find("_perf");
  if (pos != std::string::npos) n = n.substr(0, pos);
  const auto slash = n.find_last_of('/');
  if (slash != std::string::npos) n = n.substr(slash + 1);
  if (n == "all_reduce" || n == "allreduce") return CollectiveOp::all_reduce;
  if (n == "all_gather" || n == "allgather") return CollectiveOp::all_gather;
  if (n == "reduce_scatter" || n == "reducescatter") return CollectiveOp::reduce_scatter;
  if (n == "broadcast") return CollectiveOp::broadcast;
  if (n == "reduce") return CollectiveOp::reduce;
  if (n == "alltoall" || n == "all_to_all") return CollectiveOp::all_to_all;
  if (n == "sendrecv" || n == "send_recv") return CollectiveOp::send_recv;
  return std::nullopt;
}

int ranks_implied_by_bus_factor(CollectiveOp op, const NcclTestsMeasurement& m) {
  if (!(m.algbw_gbps > 0.0) || !(m.busbw_gbps > 0.0)) return 0;
  const double r = m.busbw_gbps / m.algbw_gbps;
  double n = 0.0;
  switch (op) {
    case CollectiveOp::all_reduce: n = r < 2.0 ? 2.0 / (2.0 - r) : 0.0; break;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_to_all: n = r < 1.0 ? 1.0 / (1.0 - r) : 0.0; break;
    default: return 0;
  }
  return n >= 1.5 ? static_cast<int>(std::lround(n)) : 0;
}

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& source) {
  NcclTestsLog log;
  log.source = source;
  std::vector<Diagnostic> errors;
  auto fail = [&](int line, const std::string& message) {
    errors.push_back(Diagnostic{source, line, 0, "", message, ""});
  };

  // Lines, with their numbers.
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == text.size()) break;
    start = end + 1;
  }
  // Fixture header: `# key: value` before `# ---- BEGIN RAW`; the log is what the markers enclose.
  std::size_t first = 0;
  std::size_t last = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with(kBeginRaw)) {
      for (std::size_t j = 0; j < i; ++j) {
        std::string_view l = lines[j];
        if (!l.starts_with("# ")) continue;
        l.remove_prefix(2);
        const auto colon = l.find(": ");
        if (colon == std::string_view::npos) continue;
        log.metadata.emplace(std::string(trim(l.substr(0, colon))), std::string(trim(l.substr(colon + 2))));
      }
      first = i + 1;
      for (std::size_t j = i + 1; j < lines.size(); ++j) {
        if (lines[j].starts_with(kEndRaw)) {
          last = j;
          break;
        }
      }
      break;
    }
  }
  if (auto it = log.metadata.find("collective"); it != log.metadata.end()) {
    const auto words = split_words(it->second);
    if (!words.empty()) log.op = collective_op_from_name(words[0]);
  }
  // NCCL_* settings: the fixture header's `env:` line (`NCCL_NVLS_ENABLE=0 ...`).
  if (auto it = log.metadata.find("env"); it != log.metadata.end()) {
    for (auto w : split_words(it->second)) {
      const auto eq = w.find('=');
      if (w.starts_with("NCCL_") && eq != std::string_view::npos) {
        log.nccl_env[std::string(w.substr(0, eq))] = std::string(w.substr(eq + 1));
      }
    }
  }
  // ... and the settings a launch command exports: `mpirun -x NCCL_ALGO=Ring ...` or a leading
  // `NCCL_ALGO=Ring ./all_reduce_perf`, in the header's `command:` line or in the log itself. Only
  // those two forms count (a setting quoted in prose, `[-x NCCL_MIN_CTAS=24]`, does not).
  const auto add_command_settings = [&log](std::string_view line) {
    const auto words = split_words(line);
    bool leading = true;
    for (std::size_t i = 0; i < words.size(); ++i) {
      const std::string_view w = words[i];
      const auto eq = w.find('=');
      const bool assignment = w.starts_with("NCCL_") && eq != std::string_view::npos;
      if (assignment && (leading || (i > 0 && words[i - 1] == "-x"))) {
        log.nccl_env.try_emplace(std::string(w.substr(0, eq)), std::string(w.substr(eq + 1)));
      }
      if (!assignment) leading = false;
    }
  };
  if (auto it = log.metadata.find("command"); it != log.metadata.end()) add_command_settings(it->second);

  Layout layout;
  int max_rank = -1;
  for (std::size_t i = first; i < last; ++i) {
    const int line_number = static_cast<int>(i) + 1;
    const std::string_view raw = strip_rank_prefix(lines[i]);
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    const auto words = split_words(line);
    if (line.front() == '#') {
      // Header lines.
      std::vector<std::string_view> w(words.begin() + (words[0] == "#" ? 1 : 0), words.end());
      if (!w.empty() && w[0].starts_with("#")) w[0].remove_prefix(1);
      if (w.size() >= 4 && w[0] == "nThread") {
        parse_integer(w[1], log.threads);
        if (w[2] == "nGpus") parse_integer(w[3], log.gpus_per_thread);
      } else if (w.size() >= 2 && w[0] == "Rank") {
        int rank = -1;
        if (parse_integer(w[1], rank)) max_rank = std::max(max_rank, rank);
      } else if (w.size() >= 4 && w[0] == "Collective" && w[1] == "test") {
        if (!log.op) log.op = collective_op_from_name(w.back());
      } else if (w.size() >= 3 && w[0] == "nccl-tests" && w[1] == "version") {
        for (auto x : w) {
          if (x.starts_with("nccl-library=")) {
            int code = 0;
            if (parse_integer(x.substr(13), code)) {
              log.nccl_version = std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
                                 std::to_string(code % 100);
            }
          }
        }
      } else if (auto l = layout_from_header(words)) {
        layout = *l;
        log.reduced_table = layout.reduced;
      }
      continue;
    }
    if (words[0] == "size") {  // a column header without '#' (author-reduced tables)
      if (auto l = layout_from_header(words)) {
        layout = *l;
        log.reduced_table = layout.reduced;
      }
      continue;
    }
    if (words.size() >= 3 && words[0] == "NCCL" && words[1] == "version") {
      log.nccl_version = std::string(words[2]);
      continue;
    }
    // NCCL_DEBUG=INFO prints "... NCCL INFO NCCL_NVLS_ENABLE set by environment to 0."
    for (std::size_t w = 0; w + 5 < words.size(); ++w) {
      if (words[w].starts_with("NCCL_") && words[w + 1] == "set" && words[w + 2] == "by" &&
          words[w + 3] == "environment" && words[w + 4] == "to") {
        std::string_view value = words[w + 5];
        if (value.ends_with('.')) value.remove_suffix(1);
        log.nccl_env[std::string(words[w])] = std::string(value);
      }
    }
    bool command = false;
    for (auto x : words) {
      if (x.ends_with("_perf") || x.ends_with("_perf_mpi")) command = true;
      if (x.ends_with("_perf") && !log.op) log.op = collective_op_from_name(x);
    }
    if (command) add_command_settings(line);
    // Is it a result row? Standard rows: size, count, type. Reduced rows: a size then numbers.
    long long size = 0;
    const bool size_ok = parse_integer(words[0], size, layout.reduced);
    const bool standard_candidate = words.size() >= 3 && size_ok && is_integer(words[1]) && starts_alpha(words[2]);
    const bool reduced_candidate = layout.reduced && size_ok && words.size() >= 2 && !starts_alpha(words[1]);
    if (!standard_candidate && !reduced_candidate) continue;  // noise: help messages, prompts, INFO lines

    Layout row_layout = layout;
    if (!row_layout.known) row_layout = layout_from_width(words.size());
    if (!row_layout.known || static_cast<int>(words.size()) != row_layout.width()) {
      fail(line_number, "result row has " + std::to_string(words.size()) + " columns, expected " +
                            (row_layout.known ? std::to_string(row_layout.width()) : std::string("8, 9, 11, 12 or 13")) +
                            " for this table's layout");
      continue;
    }
    NcclTestsRow row;
    row.line = line_number;
    row.size = Bytes(static_cast<double>(size));
    std::size_t at = 1;
    auto read_measurement = [&](NcclTestsMeasurement& m) -> bool {
      double time_us = 0.0;
      const std::string algbw_word(words[at + 1]);
      if (!parse_number(words[at], time_us) || !parse_number(words[at + 1], m.algbw_gbps) ||
          !parse_number(words[at + 2], m.busbw_gbps)) {
        fail(line_number, "cannot read time/algbw/busbw from '" + std::string(words[at]) + " " +
                              std::string(words[at + 1]) + " " + std::string(words[at + 2]) + "'");
        return false;
      }
      m.time = units::microseconds(time_us);
      at += 3;
      if (row_layout.check && !row_layout.reduced) {
        double wrong = 0.0;
        if (words[at] != "N/A" && parse_number(words[at], wrong)) m.wrong = wrong;
        else if (words[at] != "N/A") {
          fail(line_number, "cannot read the check column '" + std::string(words[at]) + "'");
          return false;
        }
        ++at;
      }
      if (!(time_us > 0.0) || m.algbw_gbps < 0.0 || m.busbw_gbps < 0.0) {
        fail(line_number, "time must be positive and bandwidths non-negative");
        return false;
      }
      // algbw = size / time, printed with two decimals.
      const double expected = static_cast<double>(size) / (time_us * 1e3);
      if (std::abs(expected - m.algbw_gbps) > 0.011 + 0.01 * expected) {
        fail(line_number, "algbw " + algbw_word + " GB/s does not match size/time = " + std::to_string(expected) +
                              " GB/s: the columns are shifted or the numbers are corrupt");
        return false;
      }
      return true;
    };
    if (!row_layout.reduced) {
      if (!parse_integer(words[1], row.count)) {
        fail(line_number, "cannot read the element count '" + std::string(words[1]) + "'");
        continue;
      }
      row.type = std::string(words[2]);
      row.redop = std::string(words[3]);
      at = 4;
      if (row_layout.root) {
        if (!parse_integer(words[4], row.root)) {
          fail(line_number, "cannot read the root '" + std::string(words[4]) + "'");
          continue;
        }
        at = 5;
      }
    }
    if (!read_measurement(row.out_of_place)) continue;
    if (row_layout.groups == 2 && !row_layout.reduced) {
      NcclTestsMeasurement in_place;
      if (!read_measurement(in_place)) continue;
      row.in_place = in_place;
    }
    log.rows.push_back(std::move(row));
  }
  log.ranks = max_rank + 1;
  if (errors.empty() && log.rows.empty()) {
    fail(0, "no nccl-tests result rows found (expected lines like '  1048576  262144  float  sum  -1  ...')");
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  return log;
}

NcclTestsLog read_nccl_tests_log(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(std::vector<Diagnostic>{{path.string(), 0, 0, "", "cannot open the file", ""}});
  std::ostringstream text;
  text << in.rdbuf();
  return parse_nccl_tests_log(text.str(), path.string());
}

}  // namespace stepcast
