#pragma once
// Finding one op of a layer's op list by name, for tests of the op builders (model/layer_ops.h).

#include <string_view>

#include "model/op.h"

namespace stepcast::test {

// The first op of `ops` named `name`, or nullptr when there is none.
inline const Op* find_op(const OpList& ops, std::string_view name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace stepcast::test
