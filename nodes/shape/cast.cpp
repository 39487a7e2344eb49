// Cast (ONNX Cast-21) between every pair of graph dtypes. ONNX leaves some
// conversions undefined; nodeflow defines them all, without undefined
// behaviour (docs/graph-format.md, operators table):
//  - float -> integer: truncation toward zero; out-of-range values saturate
//    to the integer's smallest or largest value, NaN becomes 0;
//  - integer -> integer: the low bits (two's complement wrap, ONNX's rule);
//  - -> float: the nearest value, ties to even, +-inf out of range. float64
//    and int64 reach float16/bfloat16 through a round-to-odd float32, so
//    they round once, as a direct conversion would (int64 beyond 2^53 is
//    first rounded to float64).
// `saturate` concerns float8 only, which nodeflow lacks. The gradient of a
// cast between float dtypes is the output gradient cast back; casts to or
// from integers have none.
#include <bit>
#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

constexpr std::int64_t kParallelElements = std::int64_t{1} << 16;

// ONNX TensorProto.DataType codes of the graph dtypes.
struct DTypeCode {
  std::int64_t code;
  DType dtype;
};
constexpr DTypeCode kCodes[] = {{1, DType::Float32}, {2, DType::UInt8},  {3, DType::Int8},     {7, DType::Int64},
                                {10, DType::Float16}, {11, DType::Float64}, {16, DType::BFloat16}};

DType dtype_of_code(std::int64_t code) {
  for (const DTypeCode& c : kCodes)
    if (c.code == code) return c.dtype;
  throw InvalidAttribute("attributes.to: " + std::to_string(code) + " is not a graph dtype");
}

template <typename T> constexpr bool is_narrow_float_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// d rounded to float32 with round-to-odd: an inexact result is the
// neighbour toward zero with its last bit set, which a second rounding to a
// format of at most 22 bits of precision turns into the correctly rounded
// value.
float round_to_odd(double d) {
  // Beyond float32's range: the largest float32, whose last bit is set, is
  // infinite in the narrower formats too.
  if (!std::isinf(d) && std::abs(d) > std::numeric_limits<float>::max())
    return std::signbit(d) ? -std::numeric_limits<float>::max() : std::numeric_limits<float>::max();
  const float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  const float toward_zero = std::abs(static_cast<double>(f)) > std::abs(d) ? std::nextafter(f, 0.0f) : f;
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(toward_zero) | 1u);
}

// d rounded to float32, ties to even, +-inf beyond its range (a C++
// conversion of an out-of-range double is undefined).
float to_float32(double d) {
  constexpr float kMax = std::numeric_limits<float>::max();
  if (!(std::abs(d) > kMax)) return static_cast<float>(d);  // NaN too
  // From FLT_MAX + half an ulp on, ties to even round to infinity.
  const float magnitude = std::abs(d) >= 0x1.ffffffp+127 ? std::numeric_limits<float>::infinity() : kMax;
  return std::signbit(d) ? -magnitude : magnitude;
}

template <typename To, typename From> To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    return static_cast<To>(v);  // modulo 2^n since C++20
  } else if constexpr (std::is_integral_v<To>) {
    const double d = std::trunc(static_cast<double>(static_cast<accumulator_t<From>>(v)));
    // upper = max + 1, exact in double for every integer type.
    constexpr double upper = static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2.0;
    constexpr double lower = std::is_signed_v<To> ? -upper : 0.0;
    if (std::isnan(d)) return To{0};
    if (d >= upper) return std::numeric_limits<To>::max();
    if (d < lower) return std::numeric_limits<To>::min();
    return static_cast<To>(d);
  } else if constexpr (std::is_same_v<To, float> && std::is_same_v<From, double>) {
    return to_float32(v);
  } else if constexpr (is_narrow_float_v<To> && (std::is_same_v<From, double> || std::is_same_v<From, std::int64_t>)) {
    return static_cast<To>(round_to_odd(static_cast<double>(v)));
  } else if constexpr (is_narrow_float_v<To>) {
    return static_cast<To>(static_cast<float>(v));  // exact in float32 (int8, uint8, float16, bfloat16) or float32 itself
  } else {
    return static_cast<To>(static_cast<accumulator_t<From>>(v));
  }
}

Tensor cast_tensor(const Tensor& x, DType to, int threads) {
  Tensor y = Tensor::uninitialized(to, x.shape());
  visit_dtype(x.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    visit_dtype(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* src = x.data<From>();
      To* dst = y.data<To>();
      parallel_ranges(x.numel() < kParallelElements ? 1 : threads, x.numel(),
                      [&](std::int64_t begin, std::int64_t end) {
                        for (std::int64_t i = begin; i < end; ++i) dst[i] = convert<To>(src[i]);
                      });
    });
  });
  return y;
}

class CastNode final : public Node {
 public:
  explicit CastNode(NodeConfig c) : Node(std::move(c)), to_(dtype_of_code(attr_int(config().attributes, "to"))) {
    // Read like every attribute (the node takes checked attributes only),
    // though it changes nothing without float8 dtypes.
    static_cast<void>(attr_int(config().attributes, "saturate"));
  }

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    return {TensorInfo{to_, ctx.inputs[0]->shape}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    ctx.outputs[0] = x.dtype() == to_ ? x : cast_tensor(x, to_, ctx.threads);
  }

  // accumulate_gradient takes any pair of float dtypes.
  bool takes_float32_gradients() const override { return true; }

  void backward(const BackwardContext& ctx) const override {
    if (!is_float(ctx.inputs[0].dtype) || !is_float(to_)) return;
    // accumulate_gradient converts the output gradient to the input's dtype.
    accumulate_gradient(ctx.grad_inputs[0], ctx.grad_outputs[0], ctx.scale_for(0));
  }

 private:
  DType to_;
};

}  // namespace

void register_cast(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Cast";
  s.definition = "ONNX Cast-21";
  s.doc = "Converts each element to the dtype to (float to integer truncates toward zero)";
  s.inputs = {{"input", graph_dtypes(), "any shape"}};
  s.outputs = {{"output", graph_dtypes(), "input's shape, dtype `to`"}};
  AttrSpec to;
  to.name = "to";
  to.kind = AttrKind::Int;
  to.required = true;
  to.since_version = 6;  // Cast-1's `to` was a string
  for (const DTypeCode& c : kCodes) to.allowed_ints.push_back(c.code);
  to.doc = "the output dtype as an ONNX TensorProto code: 1 float32, 2 uint8, 3 int8, 7 int64, 10 float16, "
           "11 float64, 16 bfloat16";
  AttrSpec saturate;
  saturate.name = "saturate";
  saturate.kind = AttrKind::Int;
  saturate.default_value = AttrValue{std::int64_t{1}};
  saturate.allowed_ints = {0, 1};
  saturate.since_version = 19;
  saturate.doc = "float8 conversions only (nodeflow has no float8 dtype): no effect";
  s.attributes = {to, saturate};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<CastNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
