// Opset history of the activations, Softmax and LogSoftmax (docs/onnx.md,
// "Opset history").
#include "core/errors.hpp"
#include "core/shape.hpp"
#include "serialization/onnx/detail/opset_common.hpp"

namespace nodeflow::onnx_import::detail {
namespace {

const std::vector<DTypeSince> kBf16At22 = {{DType::BFloat16, 22}};

/// Softmax/LogSoftmax before 13 flatten the input to 2-D at `axis` (default 1)
/// and normalize over the flattened second part; from 13 over the one axis
/// `axis` (default -1). They agree when at most one axis from `axis` on is not
/// 1 (the new axis is that one), which needs the input's shape; else refused.
Custom coerced_2d_axis() {
  return {[](Upgrade& up) {
            const AttrValue* a = up.attribute("axis");
            const std::int64_t axis = a != nullptr ? std::get<std::int64_t>(*a) : 1;
            const std::string op = up.node().op_type;
            const std::string flattens = op + " before opset 13 normalizes over axes " + std::to_string(axis) +
                                         ".. of the input flattened to 2-D, from 13 over one axis";
            const std::optional<KnownTensor> x = up.known_input(0);
            if (!x)
              up.refuse(flattens + ": read only when the input's shape is known, and '" +
                        printable(up.input(0), 200) +
                        "' is not a graph input, an initializer or the output of a node listed before it");
            const Shape& shape = x->info.shape;
            const auto rank = static_cast<std::int64_t>(shape.size());
            const std::int64_t from = axis < 0 ? axis + rank : axis;
            if (from < 0 || from >= rank)
              up.refuse_attribute("attribute 'axis' = " + std::to_string(axis) + " is outside the input's rank " +
                                  std::to_string(rank));
            std::int64_t single = rank - 1;
            int wide = 0;
            for (std::int64_t k = from; k < rank; ++k)
              if (shape[static_cast<std::size_t>(k)] != 1) {
                single = k;
                ++wide;
              }
            if (wide > 1)
              up.refuse(flattens + ": the input's shape " + to_string(shape) + " has more than one axis from " +
                        std::to_string(from) + " on that is not 1 (or not known)");
            up.node().attributes["axis"] = single;
          },
          "coerced to 2-D: read when at most one axis from 'axis' on is not 1, which becomes the axis"};
}

/// PRelu before 7 applies a slope of size 1 to everything and a [C] slope
/// per channel (axis 1); from 7 the slope broadcasts numpy-style from the
/// end. They agree for a slope of one element, of X's shape, or [C] on a 2-D X.
Custom per_channel_slope() {
  return {[](Upgrade& up) {
            const std::optional<KnownTensor> slope = up.known_input(1);
            const std::optional<KnownTensor> x = up.known_input(0);
            if (slope) {
              std::int64_t n = 1;
              for (std::int64_t d : slope->info.shape) n = d < 0 ? -1 : (n < 0 ? -1 : n * d);
              if (n == 1) return;
              if (x && x->info.shape == slope->info.shape) return;
              if (x && x->info.shape.size() == 2 && slope->info.shape.size() == 1) return;
            }
            up.refuse("PRelu before opset 7 applies a [C] slope per channel (axis 1), from 7 it broadcasts from "
                      "the last axis: read only when the slope has one element, X's shape, or X is 2-D (shapes "
                      "unknown or not so here)");
          },
          "per-channel slope: read for one element, X's shape, or a 2-D X"};
}

/// Relu, Sigmoid, Tanh, ...: consumed_inputs at 1, then `later` versions.
OpHistory with_consumed(const std::string& op, std::vector<AttrInfo> attrs, std::vector<int> later,
                        std::vector<DTypeSince> dtypes = {}, std::vector<Step> first_steps = {}) {
  first_steps.insert(first_steps.begin(), kDropConsumedInputs);
  OpHistory h{op, {version(1, with(attrs, {kConsumedInputs}), 1, 1, std::move(first_steps))}, std::move(dtypes)};
  for (int since : later) h.versions.push_back(version(since, attrs, 1, 1));
  return h;
}

OpHistory plain(const std::string& op, std::vector<AttrInfo> attrs, std::vector<int> versions,
                std::vector<DTypeSince> dtypes = {}) {
  OpHistory h{op, {}, std::move(dtypes)};
  for (int since : versions) h.versions.push_back(version(since, attrs, 1, 1));
  return h;
}

OpHistory softmax(const std::string& op) {
  const std::vector<AttrInfo> axis = {int_attr("axis")};
  return {op,
          {version(1, axis, 1, 1, {coerced_2d_axis()}), version(11, axis, 1, 1, {coerced_2d_axis()}),
           version(13, axis, 1, 1)},
          {}};
}

}  // namespace

std::vector<OpHistory> activations_history() {
  const std::vector<AttrInfo> alpha = {float_attr("alpha")};
  const std::vector<AttrInfo> alpha_beta = {float_attr("alpha"), float_attr("beta")};
  const std::vector<AttrInfo> alpha_gamma = {float_attr("alpha"), float_attr("gamma")};
  // Selu-1's defaults (float attributes), which Selu-6 refined.
  const std::vector<Step> selu1 = {OldDefault{"alpha", static_cast<double>(1.6732f)},
                                   OldDefault{"gamma", static_cast<double>(1.0507f)}};
  return {
      with_consumed("Relu", {}, {6, 13, 14}),
      with_consumed("Sigmoid", {}, {6, 13}),
      with_consumed("Tanh", {}, {6, 13}),
      with_consumed("Elu", alpha, {6, 22}, kBf16At22),
      with_consumed("LeakyRelu", alpha, {6, 16}),
      with_consumed("HardSigmoid", alpha_beta, {6, 22}, kBf16At22),
      with_consumed("Selu", alpha_gamma, {6, 22}, kBf16At22, selu1),
      {"PRelu",
       {version(1, {kConsumedInputs}, 2, 1, {kDropConsumedInputs, per_channel_slope()}),
        version(6, {}, 2, 1, {per_channel_slope()}), version(7, {}, 2, 1), version(9, {}, 2, 1),
        version(16, {}, 2, 1)},
       {}},
      plain("Celu", alpha, {12}),
      plain("HardSwish", {}, {14, 22}, kBf16At22),
      plain("Softplus", {}, {1, 22}, kBf16At22),
      plain("Softsign", {}, {1, 22}, kBf16At22),
      plain("Mish", {}, {18, 22}, kBf16At22),
      plain("Gelu", {string_attr("approximate")}, {20}),
      softmax("Softmax"),
      softmax("LogSoftmax"),
  };
}

}  // namespace nodeflow::onnx_import::detail
