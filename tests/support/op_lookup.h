#pragma once
// Finding one op of a layer's op list by name, and summing a list, for tests of the op builders
// (model/layer_ops.h).

#include <optional>
#include <string>
#include <string_view>

#include "model/layer_ops.h"
#include "model/op.h"

namespace stepcast::test {

// The first op of `ops` named `name`, or nullptr when there is none.
inline const Op* find_op(const OpList& ops, std::string_view name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// Sums over an op list: bytes moved and FLOPs.
inline double total_bytes(const OpList& ops) {
  double b = 0.0;
  for (const Op& op : ops) b += op.bytes.value();
  return b;
}
inline double total_flops(const OpList& ops) {
  double f = 0.0;
  for (const Op& op : ops) f += op.flops.value();
  return f;
}

// A layer's forward op and the backward op that undoes it, by the builders' naming: `name` in
// layer_forward_ops(shape), `name` + ".backward" in layer_backward_ops(shape). Copies, so they
// outlive the lists; nullopt when either is missing.
struct ForwardBackwardOps {
  Op forward;
  Op backward;
};
inline std::optional<ForwardBackwardOps> forward_and_backward_op(const LayerShape& shape, std::string_view name) {
  const OpList forward = layer_forward_ops(shape);
  const OpList backward = layer_backward_ops(shape);
  const Op* f = find_op(forward, name);
  const Op* b = find_op(backward, std::string(name) + ".backward");
  if (f == nullptr || b == nullptr) return std::nullopt;
  return ForwardBackwardOps{*f, *b};
}

}  // namespace stepcast::test
