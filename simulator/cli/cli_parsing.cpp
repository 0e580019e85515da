#include "simulator/cli/cli_parsing.h"

#include <charconv>

#include "simulator/diagnostics.h"

namespace stepcast::cli {
namespace {

[[noreturn]] void expression_error(const std::string& option, const std::string& text, const ExprError& e) {
  throw InputError({Diagnostic{option + " '" + text + "'", 0, 0, "",
                               e.message + " (at column " + std::to_string(e.column) + ")", e.suggestion}});
}

}  // namespace

CLI::Validator whole_number_in(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && end == text.data() + text.size() && value >= min && value <= max) return {};
        return "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" +
               text + "'";
      },
      "INT in [" + std::to_string(min) + " - " + std::to_string(max) + "]");
}

std::pair<int, int> parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  int index = -1;
  int count = 0;
  const auto read = [](std::string_view s, int& out) {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
  };
  if (slash == std::string::npos || !read(std::string_view(text).substr(0, slash), index) ||
      !read(std::string_view(text).substr(slash + 1), count) || count < 1 || index < 0 || index >= count) {
    throw UsageError("--shard " + text + ": expected I/N with 0 <= I < N, e.g. --shard 0/8 for the first of 8 shards");
  }
  return {index, count};
}

Objective parse_objective_option(const std::string& text, const FieldTable& fields) {
  ExprError error;
  auto o = parse_objective(text, fields.resolver(), error);
  if (!o) expression_error("--objective", text, error);
  return std::move(*o);
}

Expression parse_condition_option(const std::string& text, const FieldTable& fields) {
  ExprError error;
  auto e = Expression::parse(text, fields.resolver(), error);
  if (!e) expression_error("--constraint", text, error);
  if (e->type() != ExprType::truth) {
    throw InputError({Diagnostic{"--constraint '" + text + "'", 0, 0, "",
                                 "a constraint must be a true/false condition, e.g. 'parallel.tp <= 8'", ""}});
  }
  return std::move(*e);
}

TableFormat table_format_for(const std::string& format, const std::string& path) {
  if (!format.empty() && format != "table") return parse_table_format(format);
  const auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".jsonl") || ends_with(".json") ? TableFormat::jsonl : TableFormat::csv;
}

}  // namespace stepcast::cli
