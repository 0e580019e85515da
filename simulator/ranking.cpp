#include "simulator/ranking.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace stepcast {

std::string Objective::text() const {
  return std::string(sense == Sense::minimize ? "min " : "max ") + expression.text();
}

std::optional<Objective> parse_objective(std::string_view text, const ExprResolver& resolver, ExprError& error) {
  std::size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start])) != 0) ++start;
  std::size_t word_end = start;
  while (word_end < text.size() && std::isalpha(static_cast<unsigned char>(text[word_end])) != 0) ++word_end;
  const std::string_view word = text.substr(start, word_end - start);
  Objective o;
  if (word == "min" || word == "minimize") {
    o.sense = Objective::Sense::minimize;
  } else if (word == "max" || word == "maximize") {
    o.sense = Objective::Sense::maximize;
  } else {
    error = ExprError{static_cast<int>(start) + 1, "an objective starts with 'min' or 'max', e.g. 'min step_time_s'", ""};
    return std::nullopt;
  }
  std::size_t rest_start = word_end;
  while (rest_start < text.size() && std::isspace(static_cast<unsigned char>(text[rest_start])) != 0) ++rest_start;
  auto e = Expression::parse(text.substr(rest_start), resolver, error);
  if (!e) {
    error.column += static_cast<int>(rest_start);
    return std::nullopt;
  }
  if (e->type() != ExprType::number) {
    error = ExprError{static_cast<int>(rest_start) + 1, "an objective must be a number to " + std::string(word) +
                                                            "imize, not a true/false condition", ""};
    return std::nullopt;
  }
  o.expression = std::move(*e);
  return o;
}

std::vector<double> objective_values(const Candidate& c, std::span<const std::string> objective_texts) {
  std::vector<double> values(objective_texts.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = c.score[i] * objective_sign(objective_texts[i]);
  return values;
}

bool ranks_before(const Candidate& a, const Candidate& b, std::size_t objectives) {
  for (std::size_t i = 0; i < objectives; ++i) {
    if (a.score[i] < b.score[i]) return true;
    if (b.score[i] < a.score[i]) return false;
  }
  return a.point < b.point;
}

bool dominates(const Candidate& a, const Candidate& b, std::size_t objectives) {
  bool better = false;
  for (std::size_t i = 0; i < objectives; ++i) {
    if (a.score[i] > b.score[i]) return false;
    if (a.score[i] < b.score[i]) better = true;
  }
  return better;
}

bool has_nan_score(const Candidate& c, std::size_t objectives) {
  for (std::size_t i = 0; i < objectives; ++i) {
    if (std::isnan(c.score[i])) return true;
  }
  return false;
}

// --- TopK ---------------------------------------------------------------------------------------

bool TopK::would_keep(const Candidate& c) const {
  if (m_k == 0 || has_nan_score(c, m_objectives)) return false;
  if (m_heap.size() < m_k) return true;
  return ranks_before(c, m_heap.front(), m_objectives);
}

void TopK::offer(Candidate c) {
  if (!would_keep(c)) return;
  const auto worse_on_top = [this](const Candidate& a, const Candidate& b) { return ranks_before(a, b, m_objectives); };
  if (m_heap.size() == m_k) {
    std::pop_heap(m_heap.begin(), m_heap.end(), worse_on_top);
    m_heap.pop_back();
  }
  m_heap.push_back(std::move(c));
  std::push_heap(m_heap.begin(), m_heap.end(), worse_on_top);
}

void TopK::merge(const TopK& other) {
  for (const Candidate& c : other.m_heap) offer(c);
}

const Candidate* TopK::threshold() const {
  if (m_k == 0 || m_heap.size() < m_k) return nullptr;
  return &m_heap.front();
}

std::vector<Candidate> TopK::sorted() const {
  std::vector<Candidate> out = m_heap;
  std::sort(out.begin(), out.end(), [this](const Candidate& a, const Candidate& b) { return ranks_before(a, b, m_objectives); });
  return out;
}

// --- ParetoSet ----------------------------------------------------------------------------------

bool ParetoSet::would_keep(const Candidate& c) const {
  if (has_nan_score(c, m_objectives)) return false;
  return std::none_of(m_items.begin(), m_items.end(), [&](const Candidate& x) { return dominates(x, c, m_objectives); });
}

void ParetoSet::offer(Candidate c) {
  if (!would_keep(c)) return;
  std::erase_if(m_items, [&](const Candidate& x) { return dominates(c, x, m_objectives); });
  m_items.push_back(std::move(c));
}

void ParetoSet::merge(const ParetoSet& other) {
  for (const Candidate& c : other.m_items) offer(c);
}

std::vector<Candidate> ParetoSet::sorted() const {
  std::vector<Candidate> out = m_items;
  std::sort(out.begin(), out.end(), [this](const Candidate& a, const Candidate& b) { return ranks_before(a, b, m_objectives); });
  return out;
}

}  // namespace stepcast
