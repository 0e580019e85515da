#pragma once
// Strict reading of YAML documents (scenario and catalog files) into values, collecting every
// problem as a Diagnostic instead of stopping at the first.
//
// DiagnosticSink gathers the diagnostics of one document. It remembers where each key path was
// read (so checks made after parsing, like tp*pp*dp*cp == gpus, can point at a line) and which
// key paths came from `--set` overrides (their errors name the override instead of a line).
// Lines and columns are 1-based (yaml-cpp's marks are 0-based).
//
// MapReader reads one mapping against its schema, the list of keys it may hold: it reports
// duplicate keys, unknown keys (with a did-you-mean among the allowed ones), missing required
// keys, wrong YAML types, values out of range, bad enum values and quantities without units.
// Each typed getter returns std::nullopt when the key is absent or its value was wrong (the
// latter already reported), so callers keep their defaults and carry on.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/diagnostics.h"
#include "simulator/enum_names.h"
#include "simulator/quantity_parse.h"

namespace stepcast {

struct Location {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
};

class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file) : m_file(std::move(file)) {}

  [[nodiscard]] const std::string& file() const { return m_file; }
  [[nodiscard]] Location start_of_file() const { return {m_file, 1, 1}; }

  // The node's position, or `fallback` for nodes made in memory (by overrides) that have none.
  [[nodiscard]] Location location_of(const YAML::Node& node, const Location& fallback) const;

  // Remembers where `key_path` was read; location_of(path) then finds it or its nearest ancestor.
  void remember(const std::string& key_path, const Location& where);
  [[nodiscard]] Location location_of(const std::string& key_path) const;

  // Errors at `key_path` or below it are attributed to the override `label` ("--set parallel.tp=5").
  void mark_override(const std::string& key_path, const std::string& label);
  // True when `key_path` lies at or under an overridden key path.
  [[nodiscard]] bool is_overridden(const std::string& key_path) const;
  // True when `key_path` was present in the document (remembered).
  [[nodiscard]] bool was_read(const std::string& key_path) const { return m_locations.count(key_path) > 0; }

  void error(const Location& where, const std::string& key_path, std::string message, std::string suggestion = {});
  // An error at the remembered location of `key_path`.
  void error_at(const std::string& key_path, std::string message, std::string suggestion = {});

  [[nodiscard]] std::size_t error_count() const { return m_diagnostics.size(); }
  // True when one of the first `limit` errors (all by default) is at `prefix` or below it (or, for
  // "", anywhere).
  [[nodiscard]] bool has_errors_under(const std::string& prefix, std::size_t limit = SIZE_MAX) const;

  // Marks every diagnostic after the first `first` as a consistency error (Diagnostic::consistency).
  void mark_consistency_errors(std::size_t first);

  // Every diagnostic so far, in file order (errors attributed to overrides first); clears them.
  std::vector<Diagnostic> take();
  // Throws one InputError holding every diagnostic, in file order, if there is any.
  void throw_if_errors();

 private:
  std::string m_file;
  std::map<std::string, Location> m_locations;
  std::vector<std::pair<std::string, std::string>> m_overrides;  // key path, label
  std::vector<Diagnostic> m_diagnostics;
};

// Parses one YAML document. A syntax error, or a second document after `---`, is reported to the
// sink and gives std::nullopt; an empty document gives a null node.
std::optional<YAML::Node> load_document(DiagnosticSink& sink, const std::string& text);

// A value inside a document: the node, its key path and where it is.
struct YamlValue {
  YAML::Node node;
  std::string path;
  Location where;
};

// Inclusive bounds for integers; the defaults accept any positive integer that fits the `int`
// fields every scenario and catalog count is stored in (2^31 - 1), so a value that would wrap
// around is reported, never stored.
inline constexpr long long kMaxStoredInteger = 2147483647LL;
struct IntRange {
  long long min = 1;
  long long max = kMaxStoredInteger;
};
inline constexpr IntRange kPositive{1, kMaxStoredInteger};
inline constexpr IntRange kNonNegative{0, kMaxStoredInteger};

// Bounds for real numbers.
struct RealRange {
  double min = 0.0;
  bool min_exclusive = true;  // default: strictly positive
  double max = 1e300;
};

// How a node's content reads in an error: "'abc'", "a mapping", "a sequence", "nothing".
std::string describe_node(const YAML::Node& node);

// Typed reading of one value; each reports to `sink` and returns nullopt on error.
std::optional<long long> read_integer(DiagnosticSink& sink, const YamlValue& v, IntRange range = kPositive);
std::optional<double> read_real(DiagnosticSink& sink, const YamlValue& v, RealRange range = {});
std::optional<bool> read_bool(DiagnosticSink& sink, const YamlValue& v);
std::optional<std::string> read_string(DiagnosticSink& sink, const YamlValue& v);
// `positive`: the value must be > 0 (sizes, bandwidths); otherwise >= 0.
std::optional<double> read_quantity(DiagnosticSink& sink, const YamlValue& v, Dimension d, bool positive = true);
// "4:1" or a plain number; >= 1.
std::optional<double> read_ratio(DiagnosticSink& sink, const YamlValue& v);
// A string naming one of `choices`; on a miss the error lists them and suggests the closest.
std::optional<std::string> read_choice(DiagnosticSink& sink, const YamlValue& v, const std::vector<std::string>& choices,
                                       std::string_view what);

template <class E>
std::optional<E> read_enum(DiagnosticSink& sink, const YamlValue& v) {
  const auto text = read_choice(sink, v, enum_spellings<E>(), "");
  if (!text) return std::nullopt;
  return parse_enum<E>(*text);
}

class MapReader {
 public:
  // `where` is the position reported for problems with the mapping as a whole (usually its key).
  // `allowed` lists every key the mapping may hold.
  MapReader(DiagnosticSink& sink, const YAML::Node& node, std::string path, Location where,
            std::vector<std::string> allowed);

  [[nodiscard]] bool is_mapping() const { return m_is_mapping; }
  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] std::optional<YamlValue> get(std::string_view key) const;
  [[nodiscard]] std::string path_of(std::string_view key) const;
  [[nodiscard]] const Location& where() const { return m_where; }
  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] DiagnosticSink& sink() const { return m_sink; }

  // Reports `key` as missing; `what` says what it should hold ("the GPUs in the job").
  void missing(std::string_view key, std::string_view what) const;
  // Reports `key` as not allowed here, with the reason ("only with mode: serving").
  void not_allowed(std::string_view key, std::string_view reason) const;

  std::optional<long long> integer(std::string_view key, IntRange range = kPositive) const;
  std::optional<double> real(std::string_view key, RealRange range = {}) const;
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<std::string> string(std::string_view key) const;
  std::optional<double> quantity(std::string_view key, Dimension d, bool positive = true) const;
  std::optional<double> ratio(std::string_view key) const;
  template <class E>
  std::optional<E> enumeration(std::string_view key) const {
    const auto v = get(key);
    if (!v) return std::nullopt;
    return read_enum<E>(m_sink, *v);
  }

  // Keys present in the document, in order.
  [[nodiscard]] std::vector<std::string> keys() const;

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
    Location key_where;
    Location value_where;
  };
  [[nodiscard]] const Entry* find(std::string_view key) const;

  DiagnosticSink& m_sink;
  std::string m_path;
  Location m_where;
  std::vector<std::string> m_allowed;
  std::vector<Entry> m_entries;
  bool m_is_mapping = false;
};

}  // namespace stepcast
