#pragma once
// A collective model whose times are fixed per operation, whatever the size and the group: for
// tests that check exposure arithmetic exactly (each collective's time is known, so is the sum).
// All-gathers take m_gather seconds, reduce-scatters m_scatter, all-reduces m_reduce; every other
// operation is free.

#include <string_view>

#include "model/collective.h"

namespace stepcast::test {

class FixedCollectives final : public CollectiveModel {
 public:
  [[nodiscard]] std::string_view name() const override { return "fixed"; }
  [[nodiscard]] Seconds time(CollectiveOp op, Bytes, const GroupLayout&) const override {
    switch (op) {
      case CollectiveOp::all_gather: return Seconds(m_gather);
      case CollectiveOp::reduce_scatter: return Seconds(m_scatter);
      case CollectiveOp::all_reduce: return Seconds(m_reduce);
      default: return Seconds(0.0);
    }
  }
  double m_gather = 0.0;
  double m_scatter = 0.0;
  double m_reduce = 0.0;
};

}  // namespace stepcast::test
