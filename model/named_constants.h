#pragma once
// NamedConstants<Derived>: for_each_constant(), shared by the structs of named empirical constants
// (CostParameters, InferenceCostParameters).
//
// Contract: Derived defines
//   template <class Self, class F> static void visit_constants(Self& self, F& f);
// which calls f(name, value, source) for every constant of `self`, in declaration order, and
// declares `friend struct NamedConstants<Derived>` when that function is private.
// for_each_constant(f) calls it with Self = Derived (value is a double&, so f may change it) on a
// mutable struct and Self = const Derived (a const double&) on a const one. Names are stable:
// calibration profiles and --set refer to constants by them. The base has no data: it changes
// neither the layout nor the value of Derived.

namespace stepcast {

template <class Derived>
struct NamedConstants {
  // Calls f(name, value, source) for every constant, in declaration order; `value` is a
  // reference (double& on a mutable struct, const double& on a const one).
  template <class F>
  void for_each_constant(F&& f) {
    Derived::visit_constants(static_cast<Derived&>(*this), f);
  }
  template <class F>
  void for_each_constant(F&& f) const {
    Derived::visit_constants(static_cast<const Derived&>(*this), f);
  }
};

}  // namespace stepcast
