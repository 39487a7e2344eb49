// Opset history of the elementwise math ops: unary, binary with the legacy
// broadcast of opsets 1-6, variadic, Clip (docs/onnx.md, "Opset history").
#include <algorithm>

#include "serialization/onnx/detail/opset_common.hpp"

namespace nodeflow::onnx_import::detail {
namespace {

/// With broadcast = 1, B (of more than one element) must line up with A where
/// ONNX-6 puts it: at `axis`, or at A's end without it. Y has A's shape, so B
/// has at most A's rank, and B's dimensions, less its leading and trailing 1s
/// (which Caffe2, the definition's source, skips), equal A's there (a dimension
/// of A known only at run time passes). Numpy broadcasting would read some of
/// the others (A [2, 1, 4] with B [3, 4]) with another output shape, so they are
/// refused here rather than left to it. An axis outside A is refused by the caller.
void check_lines_up(const Upgrade& up, const Shape& a, const Shape& b, const AttrValue* axis) {
  const auto ra = static_cast<std::int64_t>(a.size());
  const auto rb = static_cast<std::int64_t>(b.size());
  if (rb > ra)
    up.refuse_attribute("attribute 'broadcast' = 1: B " + to_string(b) + " has more axes than A " + to_string(a) +
                        " (legacy broadcasting repeats B over A's axes: Y has A's shape)");
  std::int64_t start = ra - rb;
  if (axis != nullptr) {
    const std::int64_t at = std::get<std::int64_t>(*axis);
    start = at < 0 ? at + ra : at;
    if (start < 0 || start + rb > ra) return;
  }
  std::int64_t first = 0;
  std::int64_t last = rb - 1;
  while (first <= last && b[static_cast<std::size_t>(first)] == 1) ++first;
  while (last >= first && b[static_cast<std::size_t>(last)] == 1) --last;
  for (std::int64_t k = first; k <= last; ++k) {
    const std::int64_t da = a[static_cast<std::size_t>(start + k)];
    const std::int64_t db = b[static_cast<std::size_t>(k)];
    if (da >= 0 && da != db)
      up.refuse_attribute(std::string(axis != nullptr ? "attribute 'axis' = " + to_string(*axis)
                                                      : std::string("attribute 'broadcast' = 1 without 'axis'")) +
                          ": B " + to_string(b) + " does not line up with A " + to_string(a) + " at axis " +
                          std::to_string(start) + " (B's axis " + std::to_string(k) + " is " + std::to_string(db) +
                          ", A's axis " + std::to_string(start + k) + " is " + std::to_string(da) +
                          "; legacy broadcasting wants B's dimensions, less leading and trailing 1s, equal to A's)");
  }
}

/// Opsets 1-6 of Add, Sub, Mul, Div, Pow: `broadcast` (default 0: shapes
/// equal) and `axis` (where B's shape lines up in A's when broadcasting; suffix
/// matching without it). ONNX-6: with broadcast = 1, B has one element, or its
/// shape is a contiguous run of A's dimensions starting at `axis`; B is
/// repeated over A's other axes and Y has A's shape. Equal shapes and a B
/// lined up at A's end read the same under opset 7's numpy broadcasting, so the
/// attributes go; so does a one-element B no longer than A's rank (a longer one,
/// an initializer, becomes a scalar). B lined up at an inner axis is read when
/// B is an initializer and A's rank is known (B becomes a constant reshaped with
/// trailing 1s). Without broadcast, A and B of known, different shapes are
/// refused (ONNX-6 wants them equal; numpy would broadcast them).
Custom legacy_broadcast() {
  return {[](Upgrade& up) {
            auto& attrs = up.node().attributes;
            const AttrValue* b = up.attribute("broadcast");
            const AttrValue* a = up.attribute("axis");
            const bool broadcast = b != nullptr && std::get<std::int64_t>(*b) != 0;
            const std::optional<KnownTensor> known_a = up.known_input(0);
            const std::optional<KnownTensor> known_b = up.known_input(1);
            const auto static_shape = [](const std::optional<KnownTensor>& t) {
              if (!t) return false;
              for (const std::int64_t d : t->info.shape)
                if (d < 0) return false;
              return true;
            };
            const auto one_element = [&](const std::optional<KnownTensor>& t) {
              if (!static_shape(t)) return false;
              for (const std::int64_t d : t->info.shape)
                if (d != 1) return false;
              return true;
            };
            if (!broadcast && static_shape(known_a) && static_shape(known_b) &&
                known_a->info.shape != known_b->info.shape)
              up.refuse_attribute("A " + to_string(known_a->info.shape) + " and B " +
                                  to_string(known_b->info.shape) +
                                  " differ, and without broadcast = 1 this opset wants them equal (legacy "
                                  "broadcasting)");
            if (broadcast && known_a && static_shape(known_b) && !one_element(known_b))
              check_lines_up(up, known_a->info.shape, known_b->info.shape, a);
            if (broadcast && one_element(known_b)) {
              const std::optional<std::size_t> rank_a = known_rank(up, 0);
              if (!rank_a || known_b->info.shape.size() > *rank_a) {
                if (known_b->value.empty())
                  up.refuse_attribute("a one-element B of rank " + std::to_string(known_b->info.shape.size()) +
                                      " is read only when it is an initializer or A's rank is at least B's");
                up.set_input(1, up.constant("B", known_b->value.clone().reshaped({})));
              }
            } else if (broadcast && a != nullptr) {
              const std::int64_t axis = std::get<std::int64_t>(*a);
              const std::optional<std::size_t> rank_a = known_rank(up, 0);
              const std::string form = "broadcast = 1 with axis = " + std::to_string(axis) +
                                       " lines B up at axis " + std::to_string(axis) +
                                       " of A (legacy broadcasting), numpy broadcasting at its end";
              if (!rank_a || !known_b)
                up.refuse_attribute("attribute 'axis': " + form +
                                    "; read only when A's rank and B's shape are known");
              const auto ra = static_cast<std::int64_t>(*rank_a);
              const auto rb = static_cast<std::int64_t>(known_b->info.shape.size());
              const std::int64_t at = axis < 0 ? axis + ra : axis;
              if (at < 0 || at + rb > ra)
                up.refuse_attribute("attribute 'axis' = " + std::to_string(axis) + ": B of rank " +
                                    std::to_string(rb) + " does not fit A of rank " + std::to_string(ra) +
                                    " there");
              if (at + rb != ra) {
                if (known_b->value.empty())
                  up.refuse_attribute("attribute 'axis': " + form + "; read only when B is an initializer");
                Shape shape = known_b->info.shape;
                shape.resize(static_cast<std::size_t>(ra - at), 1);
                up.set_input(1, up.constant("B", known_b->value.clone().reshaped(shape)));
              }
            }
            attrs.erase("broadcast");
            attrs.erase("axis");
          },
          "legacy broadcast: equal shapes, B at A's end and a one-element B pass; B at an inner axis is "
          "reshaped when it is an initializer and A's rank is known; unequal known shapes without "
          "broadcast refused"};
}

OpVersion unary1() { return version(1, {kConsumedInputs}, 1, 1, {kDropConsumedInputs}); }

/// Abs, Exp, Log, Neg, Reciprocal, Sqrt: consumed_inputs at 1, types at 6 and 13.
OpHistory unary(const std::string& op) {
  return {op, {unary1(), version(6, {}, 1, 1), version(13, {}, 1, 1)}, {}};
}

OpHistory binary(const std::string& op) {
  const std::vector<AttrInfo> legacy = {int_attr("axis"), int_attr("broadcast")};
  return {op,
          {version(1, with(legacy, {kConsumedInputs}), 2, 1, {kDropConsumedInputs, legacy_broadcast()}),
           version(6, legacy, 2, 1, {legacy_broadcast()}), version(7, {}, 2, 1), version(13, {}, 2, 1),
           version(14, {}, 2, 1)},
          {}};
}

/// Sum, Mean, Max, Min before 8: every input has the same shape. Numpy
/// broadcasting (8) reads equal shapes the same; inputs of known, different
/// shapes are refused (onnxruntime refuses them too) rather than broadcast.
Custom equal_shapes() {
  return {[](Upgrade& up) {
            std::optional<Shape> first;
            for (std::size_t k = 0; k < up.node().inputs.size(); ++k) {
              const std::optional<KnownTensor> t = up.known_input(k);
              if (!t) continue;
              if (std::find(t->info.shape.begin(), t->info.shape.end(), kDynamicDim) != t->info.shape.end()) continue;
              if (!first) {
                first = t->info.shape;
              } else if (*first != t->info.shape) {
                up.refuse("input " + std::to_string(k) + " is " + to_string(t->info.shape) + " where an earlier one is " +
                          to_string(*first) + ": before opset 8 the inputs have one shape (numpy broadcasting from 8)");
              }
            }
          },
          "inputs of known, different shapes refused"};
}

/// Sum, Mean (and Max, Min with `extra`, their int types at 12): consumed_inputs
/// at 1, equal shapes at 6, numpy broadcasting from 8.
OpHistory variadic(const std::string& op, std::vector<int> extra) {
  OpHistory h{op, {version(1, {kConsumedInputs}, kVariadic, 1, {kDropConsumedInputs, equal_shapes()}),
                   version(6, {}, kVariadic, 1, {equal_shapes()}), version(8, {}, kVariadic, 1)},
              {}};
  for (int since : extra) h.versions.push_back(version(since, {}, kVariadic, 1));
  h.versions.push_back(version(13, {}, kVariadic, 1));
  return h;
}

}  // namespace

std::vector<OpHistory> elementwise_history() {
  // Clip-6's documented defaults, the float32 extremes, made explicit: from 11
  // an absent bound is no bound (infinities pass), at 6 they were clipped.
  constexpr double kFloatMax = 3.4028234663852886e38;
  const std::vector<AttrInfo> bounds = {float_attr("max"), float_attr("min")};
  std::vector<OpHistory> all = {
      unary("Abs"), unary("Exp"), unary("Log"), unary("Neg"), unary("Reciprocal"), unary("Sqrt"),
      {"Erf", {version(9, {}, 1, 1), version(13, {}, 1, 1)}, {}},
      binary("Add"), binary("Sub"), binary("Mul"), binary("Div"),
      {"Pow",
       {version(1, {int_attr("axis"), int_attr("broadcast")}, 2, 1, {legacy_broadcast()}), version(7, {}, 2, 1),
        version(12, {}, 2, 1), version(13, {}, 2, 1), version(15, {}, 2, 1)},
       {}},
      variadic("Sum", {}), variadic("Mean", {}), variadic("Max", {12}), variadic("Min", {12}),
      {"Clip",
       {version(1, with(bounds, {kConsumedInputs}), 1, 1,
                {kDropConsumedInputs, ToInput{"min", 1}, ToInput{"max", 2}}),
        version(6, bounds, 1, 1,
                {OldDefault{"min", -kFloatMax}, OldDefault{"max", kFloatMax}, ToInput{"min", 1}, ToInput{"max", 2}}),
        version(11, {}, 3, 1), version(12, {}, 3, 1), version(13, {}, 3, 1)},
       {}},
  };
  return all;
}

}  // namespace nodeflow::onnx_import::detail
