#pragma once
// The one node class of the broadcasting elementwise ops (Add, Sub, Mul, Div,
// Pow, Max, Min, Sum, Mean): dtype checks and shape inference, the forward as
// a left fold of a binary kernel over the inputs (in the compute dtype:
// float16 and bfloat16 in float32), saving for backward, and the schema. An
// op's own file gives only its BroadcastOp: the binary kernel and the
// gradient rule.
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/node.hpp"
#include "core/registry.hpp"
#include "core/tensor.hpp"
#include "nodes/elementwise/elementwise_kernels.hpp"

namespace nodeflow::elementwise {

/// Throws UnsupportedDType unless `dtype` is one of `allowed`:
/// "Neg does not take dtype uint8 (input 0 (X); allowed: float32, ...)".
void check_dtype_in(const std::string& op, std::size_t index, const std::string& input_name, DType dtype,
                    const std::vector<DType>& allowed);

/// The graph dtypes but the unsigned ones (Neg's signed types).
std::vector<DType> signed_dtypes();
/// The float dtypes and int64 (Pow's base, PRelu).
std::vector<DType> float_and_int64_dtypes();

/// Calls f(T{}) for a kernel dtype: float, double, int8, uint8, int64.
template <typename F> void visit_kernel_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float64: return f(double{});
    case DType::Int8: return f(std::int8_t{});
    case DType::UInt8: return f(std::uint8_t{});
    case DType::Int64: return f(std::int64_t{});
    default: return f(float{});
  }
}

/// broadcast_apply over every kernel dtype.
template <typename Op> void apply_any(const Tensor& a, const Tensor& b, Tensor& c, int threads) {
  visit_kernel_dtype(a.dtype(), [&](auto tag) { broadcast_apply<decltype(tag), Op>(a, b, c, threads); });
}

/// What backward of a broadcasting op gets: the inputs and the output of the
/// forward and the output's gradient, in the compute dtype (inputs after the
/// first converted to the first's), and the context with the gradient buffers.
struct GradientArgs {
  std::span<const Tensor> x;
  const Tensor& y;
  const Tensor& dy;
  const BackwardContext& ctx;
};

/// add_gradient into the buffer of input k's gradient, over the output's shape.
template <typename T, std::size_t N, typename F>
void add_input_gradient(const GradientArgs& args, std::size_t k, const std::array<const Tensor*, N>& operands,
                        F&& f) {
  add_gradient<T, N>(args.ctx.grad_inputs[k], args.dy.shape(), operands, args.ctx.scale_for(k), args.ctx.threads,
                     std::forward<F>(f));
}

/// One broadcasting op.
struct BroadcastOp {
  std::string op_type;
  std::string definition;       ///< "ONNX Add-14"
  std::string op_doc;           ///< the op's one line (OpSchema::doc)
  std::string doc;              ///< the output's one line
  std::vector<DType> dtypes;    ///< of the first input (and the others, but for exponent_dtypes)
  std::vector<DType> exponent_dtypes;  ///< Pow: input 1 takes these, converted to input 0's dtype
  std::vector<std::string> input_names;  ///< ONNX's; one, repeating, for the variadic ops
  std::string output_name;
  bool variadic = false;        ///< 1 to n inputs (Sum, Max, Min, Mean); else exactly 2
  bool unidirectional = false;  ///< PRelu: the others broadcast to input 0's shape
  bool mean = false;            ///< divide the fold by the input count
  bool saves = false;           ///< backward needs the inputs and the output
  /// c = a (op) b broadcast to c's shape (c may be a).
  void (*apply)(const Tensor& a, const Tensor& b, Tensor& c, int threads) = nullptr;
  /// Adds the inputs' gradients (ctx.grad_inputs, ctx.scale_for, ctx.threads).
  void (*backward)(const GradientArgs& args) = nullptr;
  /// backward overwrites the buffers of ctx.overwrite_inputs (Node::overwrites_gradients).
  bool overwrites = false;
};

/// A two-input op (ONNX names A, B -> C unless given) of ONNX version `version`;
/// `op_doc` is the op's one line, `doc` the output's.
BroadcastOp binary_op(std::string op_type, int version, std::string op_doc, std::string doc, std::vector<DType> dtypes,
                      std::vector<std::string> input_names = {"A", "B"}, std::string output_name = "C");
/// A variadic op of version 13 (data_0 ... -> `output_name`).
BroadcastOp variadic_op(std::string op_type, std::string op_doc, std::string output_name, std::string doc,
                        std::vector<DType> dtypes);

/// Registers the op's schema, with a factory of the shared node class.
void register_broadcast_op(OpRegistry& registry, BroadcastOp op);

}  // namespace nodeflow::elementwise
