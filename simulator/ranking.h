#pragma once
// Objectives and the two ways of keeping the best configurations: the top K under a ranking, and
// the Pareto set (the non-dominated configurations) over several objectives.
//
// An objective is "min EXPR" or "max EXPR" over the fields of a row (simulator/result_fields.h),
// e.g. "min step_time_s", "max tokens_per_s", "min memory_per_gpu_bytes.peak",
// "min cost_per_million_tokens_usd". A candidate's score holds each objective's value signed so
// that smaller is better (max objectives negated).
//
// Ranking is a total order, so results never depend on the order candidates arrive in (threads,
// shards): lexicographic on the scores, then the point index (the earlier point wins a tie).
// Dominance: a dominates b when a is no worse in every objective and better in at least one;
// equal scores dominate neither, so both stay in the Pareto set. Candidates with a NaN score are
// never kept.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/expression.h"

namespace stepcast {

struct Objective {
  enum class Sense { minimize, maximize } sense = Sense::minimize;
  Expression expression;
  // "min step_time_s"
  [[nodiscard]] std::string text() const;
  // The value signed so that smaller is better.
  [[nodiscard]] double score(std::span<const double> row) const {
    const double v = expression.evaluate(row);
    return sense == Sense::minimize ? v : -v;
  }
};

// +1 for a "min ..." objective, -1 for a "max ..." one, from its text (a table header's objective):
// a score is the value times this, and the value the score times this.
inline double objective_sign(std::string_view objective_text) {
  return objective_text.starts_with("max") ? -1.0 : 1.0;
}

// Parses "min EXPR" / "max EXPR"; the expression must be a number. On failure fills `error`
// (columns within `text`).
std::optional<Objective> parse_objective(std::string_view text, const ExprResolver& resolver, ExprError& error);

inline constexpr std::size_t kMaxObjectives = 8;

// One configuration as ranked: its point index, its score and its row (the values of every field).
struct Candidate {
  std::uint64_t point = 0;
  std::array<double, kMaxObjectives> score{};
  std::vector<double> row;
};

// The first `objective_texts.size()` objectives' values of a candidate, as a table shows them (its
// scores with the max objectives' sign undone).
std::vector<double> objective_values(const Candidate& c, std::span<const std::string> objective_texts);

// a before b in the ranking (scores lexicographically, then point index).
bool ranks_before(const Candidate& a, const Candidate& b, std::size_t objectives);
// a dominates b over the first `objectives` scores.
bool dominates(const Candidate& a, const Candidate& b, std::size_t objectives);
// True when any of the first `objectives` scores is NaN.
bool has_nan_score(const Candidate& c, std::size_t objectives);

// The best K candidates seen so far.
class TopK {
 public:
  TopK(std::size_t k, std::size_t objectives) : m_k(k), m_objectives(objectives) {}
  // Whether a candidate with this score and point would be kept now (cheap pre-check before
  // building its row).
  [[nodiscard]] bool would_keep(const Candidate& c) const;
  void offer(Candidate c);
  void merge(const TopK& other);
  // The worst kept candidate when K are kept (the bar a newcomer must beat), else null.
  [[nodiscard]] const Candidate* threshold() const;
  // Kept candidates, best first.
  [[nodiscard]] std::vector<Candidate> sorted() const;
  [[nodiscard]] std::size_t size() const { return m_heap.size(); }

 private:
  std::size_t m_k;
  std::size_t m_objectives;
  std::vector<Candidate> m_heap;  // max-heap on the ranking: the worst kept on top
};

// The non-dominated candidates seen so far.
class ParetoSet {
 public:
  explicit ParetoSet(std::size_t objectives) : m_objectives(objectives) {}
  [[nodiscard]] bool would_keep(const Candidate& c) const;
  void offer(Candidate c);
  void merge(const ParetoSet& other);
  // The set, in ranking order.
  [[nodiscard]] std::vector<Candidate> sorted() const;
  [[nodiscard]] std::size_t size() const { return m_items.size(); }

 private:
  std::size_t m_objectives;
  std::vector<Candidate> m_items;
};

}  // namespace stepcast
