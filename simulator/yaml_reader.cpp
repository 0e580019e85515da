#include "simulator/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

namespace stepcast {
namespace {

bool is_under(const std::string& path, const std::string& prefix) {
  if (prefix.empty()) return true;
  return path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                            path[prefix.size()] == '.');
}

std::string join_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? (words.size() == 2 ? " or " : ", or ") : ", ";
    out += words[i];
  }
  return out;
}

}  // namespace

// --- DiagnosticSink ------------------------------------------------------------------------------

Location DiagnosticSink::location_of(const YAML::Node& node, const Location& fallback) const {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.line < 0) return fallback;
  return {m_file, mark.line + 1, mark.column + 1};
}

void DiagnosticSink::remember(const std::string& key_path, const Location& where) {
  m_locations.emplace(key_path, where);
}

Location DiagnosticSink::location_of(const std::string& key_path) const {
  std::string path = key_path;
  while (true) {
    const auto it = m_locations.find(path);
    if (it != m_locations.end()) return it->second;
    const std::size_t dot = path.rfind('.');
    if (dot == std::string::npos) break;
    path.resize(dot);
  }
  return {m_file, 0, 0};
}

void DiagnosticSink::mark_override(const std::string& key_path, const std::string& label) {
  m_overrides.emplace_back(key_path, label);
}

bool DiagnosticSink::is_overridden(const std::string& key_path) const {
  return std::any_of(m_overrides.begin(), m_overrides.end(),
                     [&](const auto& o) { return is_under(key_path, o.first); });
}

void DiagnosticSink::error(const Location& where, const std::string& key_path, std::string message,
                           std::string suggestion) {
  Diagnostic d{where.file, where.line, where.column, key_path, std::move(message), std::move(suggestion)};
  // The last override wins, as it does when overrides are applied.
  for (auto it = m_overrides.rbegin(); it != m_overrides.rend(); ++it) {
    if (!key_path.empty() && is_under(key_path, it->first)) {
      d.file = it->second;
      d.line = 0;
      d.column = 0;
      break;
    }
  }
  m_diagnostics.push_back(std::move(d));
}

void DiagnosticSink::error_at(const std::string& key_path, std::string message, std::string suggestion) {
  error(location_of(key_path), key_path, std::move(message), std::move(suggestion));
}

bool DiagnosticSink::has_errors_under(const std::string& prefix, std::size_t limit) const {
  const std::size_t n = std::min(limit, m_diagnostics.size());
  return std::any_of(m_diagnostics.begin(), m_diagnostics.begin() + static_cast<std::ptrdiff_t>(n),
                     [&](const Diagnostic& d) { return is_under(d.key_path, prefix); });
}

void DiagnosticSink::mark_consistency_errors(std::size_t first) {
  for (std::size_t i = first; i < m_diagnostics.size(); ++i) m_diagnostics[i].consistency = true;
}

std::vector<Diagnostic> DiagnosticSink::take() {
  // File order; errors attributed to overrides (line 0) first, in the order they were found.
  std::stable_sort(m_diagnostics.begin(), m_diagnostics.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.line != b.line) return a.line < b.line;
    return a.column < b.column;
  });
  return std::exchange(m_diagnostics, {});
}

void DiagnosticSink::throw_if_errors() {
  if (m_diagnostics.empty()) return;
  throw InputError(take());
}

std::optional<YAML::Node> load_document(DiagnosticSink& sink, const std::string& text) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    sink.error({sink.file(), e.mark.line + 1, e.mark.column + 1}, "", "not valid YAML: " + e.msg);
    return std::nullopt;
  }
  if (documents.size() > 1) {
    sink.error(sink.location_of(documents[1], {sink.file(), 0, 0}), "",
               "the file holds " + std::to_string(documents.size()) + " YAML documents (separated by ---); one is expected");
    return std::nullopt;
  }
  return documents.empty() ? YAML::Node() : documents.front();
}

// --- Reading single values -----------------------------------------------------------------------

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "nothing";
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: {
      // Long scalars (a whole non-YAML file read as one string) are cut to stay readable.
      constexpr std::size_t kMaxShown = 40;
      const std::string& s = node.Scalar();
      const std::size_t newline = s.find('\n');
      const std::size_t cut = std::min(newline, kMaxShown);
      return "'" + (cut < s.size() ? s.substr(0, cut) + "..." : s) + "'";
    }
  }
  return "nothing";
}

std::optional<long long> read_integer(DiagnosticSink& sink, const YamlValue& v, IntRange range) {
  std::string expected;
  if (range.min == 1 && range.max == kPositive.max) {
    expected = "a positive integer";
  } else if (range.min == 0 && range.max == kNonNegative.max) {
    expected = "a non-negative integer";
  } else if (range.max == kPositive.max) {
    expected = "an integer >= " + std::to_string(range.min);
  } else {
    expected = "an integer from " + std::to_string(range.min) + " to " + std::to_string(range.max);
  }
  if (!v.node.IsScalar()) {
    sink.error(v.where, v.path, "expected " + expected + ", found " + describe_node(v.node));
    return std::nullopt;
  }
  const std::string& s = v.node.Scalar();
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    sink.error(v.where, v.path, "expected " + expected + ", found '" + s + "'");
    return std::nullopt;
  }
  if (value < range.min || value > range.max) {
    // The default ranges name no upper bound in `expected`; a value above it says which.
    const bool unnamed_max = value > range.max && range.max == kMaxStoredInteger;
    sink.error(v.where, v.path,
               "expected " + expected + (unnamed_max ? " up to " + std::to_string(range.max) : std::string()) +
                   ", found " + s);
    return std::nullopt;
  }
  return value;
}

std::optional<double> read_real(DiagnosticSink& sink, const YamlValue& v, RealRange range) {
  std::string expected = "a number";
  if (range.max < 1e300) {
    expected += std::string(" ") + (range.min_exclusive ? "above " : "from ") + format_number(range.min) + " to " +
                format_number(range.max);
  } else {
    expected += std::string(range.min_exclusive ? " > " : " >= ") + format_number(range.min);
  }
  if (!v.node.IsScalar()) {
    sink.error(v.where, v.path, "expected " + expected + ", found " + describe_node(v.node));
    return std::nullopt;
  }
  const std::string& s = v.node.Scalar();
  double value = 0.0;
  const char* begin = s.data() + (!s.empty() && s.front() == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), value, std::chars_format::general);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty() || !std::isfinite(value)) {
    sink.error(v.where, v.path, "expected " + expected + ", found '" + s + "'");
    return std::nullopt;
  }
  const bool below = range.min_exclusive ? value <= range.min : value < range.min;
  if (below || value > range.max) {
    sink.error(v.where, v.path, "expected " + expected + ", found " + s);
    return std::nullopt;
  }
  return value;
}

std::optional<bool> read_bool(DiagnosticSink& sink, const YamlValue& v) {
  if (v.node.IsScalar()) {
    if (v.node.Scalar() == "true") return true;
    if (v.node.Scalar() == "false") return false;
  }
  sink.error(v.where, v.path, "expected true or false, found " + describe_node(v.node));
  return std::nullopt;
}

std::optional<std::string> read_string(DiagnosticSink& sink, const YamlValue& v) {
  if (!v.node.IsScalar()) {
    sink.error(v.where, v.path, "expected a string, found " + describe_node(v.node));
    return std::nullopt;
  }
  return v.node.Scalar();
}

std::optional<double> read_quantity(DiagnosticSink& sink, const YamlValue& v, Dimension d, bool positive) {
  if (!v.node.IsScalar()) {
    sink.error(v.where, v.path,
               "expected " + std::string(dimension_name(d)) + " with a unit, e.g. " + std::string(dimension_examples(d)) +
                   ", found " + describe_node(v.node));
    return std::nullopt;
  }
  const QuantityParse q = parse_quantity(v.node.Scalar(), d);
  if (!q.ok()) {
    sink.error(v.where, v.path, q.error, q.suggestion);
    return std::nullopt;
  }
  if (positive ? q.value <= 0.0 : q.value < 0.0) {
    sink.error(v.where, v.path,
               std::string("expected ") + (positive ? "a positive " : "a non-negative ") +
                   std::string(dimension_name(d)).substr(std::string(dimension_name(d)).find(' ') + 1) + ", found \"" +
                   v.node.Scalar() + "\"");
    return std::nullopt;
  }
  return q.value;
}

std::optional<double> read_ratio(DiagnosticSink& sink, const YamlValue& v) {
  const std::string expected = "expected a ratio >= 1 such as \"4:1\" or 4";
  if (!v.node.IsScalar()) {
    sink.error(v.where, v.path, expected + ", found " + describe_node(v.node));
    return std::nullopt;
  }
  const std::string& s = v.node.Scalar();
  const std::size_t colon = s.find(':');
  double top = 0.0;
  double bottom = 1.0;
  const auto parse = [](std::string_view t, double& out) {
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), out, std::chars_format::general);
    return ec == std::errc() && ptr == t.data() + t.size() && !t.empty() && std::isfinite(out);
  };
  const bool ok = colon == std::string::npos
                      ? parse(s, top)
                      : parse(std::string_view(s).substr(0, colon), top) &&
                            parse(std::string_view(s).substr(colon + 1), bottom) && bottom > 0.0;
  if (!ok || top / bottom < 1.0) {
    sink.error(v.where, v.path, expected + ", found '" + s + "'");
    return std::nullopt;
  }
  return top / bottom;
}

std::optional<std::string> read_choice(DiagnosticSink& sink, const YamlValue& v, const std::vector<std::string>& choices,
                                       std::string_view what) {
  const std::string expected = what.empty() ? "expected one of " + join_words(choices) : std::string(what);
  if (!v.node.IsScalar()) {
    sink.error(v.where, v.path, expected + ", found " + describe_node(v.node));
    return std::nullopt;
  }
  const std::string& s = v.node.Scalar();
  if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
  const std::string near = closest_match(s, choices);
  sink.error(v.where, v.path, expected + ", found '" + s + "'", near.empty() ? "" : "did you mean '" + near + "'?");
  return std::nullopt;
}

// --- MapReader -----------------------------------------------------------------------------------

MapReader::MapReader(DiagnosticSink& sink, const YAML::Node& node, std::string path, Location where,
                     std::vector<std::string> allowed)
    : m_sink(sink), m_path(std::move(path)), m_where(std::move(where)), m_allowed(std::move(allowed)) {
  if (!node.IsMap()) {
    m_sink.error(m_where, m_path, "expected a mapping, found " + describe_node(node));
    return;
  }
  m_is_mapping = true;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const Location key_where = m_sink.location_of(it->first, m_where);
    const Location value_where = m_sink.location_of(it->second, key_where);
    if (!it->first.IsScalar()) {
      m_sink.error(key_where, m_path, "expected a key name, found " + describe_node(it->first));
      continue;
    }
    const std::string key = it->first.Scalar();
    const std::string key_path = join_path(m_path, key);
    if (const Entry* first = find(key)) {
      m_sink.error(key_where, key_path,
                   "duplicate key '" + key + "' (first given at line " + std::to_string(first->key_where.line) + ")");
      continue;
    }
    if (std::find(m_allowed.begin(), m_allowed.end(), key) == m_allowed.end()) {
      const std::string near = closest_match(key, m_allowed);
      m_sink.error(key_where, key_path, "unknown key '" + key + "'",
                   near.empty() ? "expected one of: " + join_words(m_allowed) : "did you mean '" + near + "'?");
      continue;
    }
    m_sink.remember(key_path, value_where);
    m_entries.push_back({key, it->second, key_where, value_where});
  }
}

const MapReader::Entry* MapReader::find(std::string_view key) const {
  for (const Entry& e : m_entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

bool MapReader::has(std::string_view key) const { return find(key) != nullptr; }

std::optional<YamlValue> MapReader::get(std::string_view key) const {
  const Entry* e = find(key);
  if (e == nullptr) return std::nullopt;
  return YamlValue{e->value, path_of(key), e->value_where};
}

std::string MapReader::path_of(std::string_view key) const { return join_path(m_path, key); }

void MapReader::missing(std::string_view key, std::string_view what) const {
  m_sink.error(m_where, path_of(key), "missing required key '" + std::string(key) + "' (" + std::string(what) + ")");
}

void MapReader::not_allowed(std::string_view key, std::string_view reason) const {
  const Entry* e = find(key);
  m_sink.error(e != nullptr ? e->key_where : m_where, path_of(key),
               "key '" + std::string(key) + "' is not allowed here: " + std::string(reason));
}

std::optional<long long> MapReader::integer(std::string_view key, IntRange range) const {
  const auto v = get(key);
  return v ? read_integer(m_sink, *v, range) : std::nullopt;
}

std::optional<double> MapReader::real(std::string_view key, RealRange range) const {
  const auto v = get(key);
  return v ? read_real(m_sink, *v, range) : std::nullopt;
}

std::optional<bool> MapReader::boolean(std::string_view key) const {
  const auto v = get(key);
  return v ? read_bool(m_sink, *v) : std::nullopt;
}

std::optional<std::string> MapReader::string(std::string_view key) const {
  const auto v = get(key);
  return v ? read_string(m_sink, *v) : std::nullopt;
}

std::optional<double> MapReader::quantity(std::string_view key, Dimension d, bool positive) const {
  const auto v = get(key);
  return v ? read_quantity(m_sink, *v, d, positive) : std::nullopt;
}

std::optional<double> MapReader::ratio(std::string_view key) const {
  const auto v = get(key);
  return v ? read_ratio(m_sink, *v) : std::nullopt;
}

std::vector<std::string> MapReader::keys() const {
  std::vector<std::string> out;
  for (const Entry& e : m_entries) out.push_back(e.key);
  return out;
}

}  // namespace stepcast
