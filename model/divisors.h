#pragma once
// The divisors of a positive integer n, ascending: the splits a layout search, a sweep axis or
// `explain` tries (n <= 0 gives none).

#include <vector>

namespace stepcast {

template <typename Int>
std::vector<Int> divisors(Int n) {
  std::vector<Int> out;
  for (Int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

}  // namespace stepcast
