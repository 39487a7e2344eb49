#pragma once
// ONNX tensors (TensorProto) <-> nodeflow tensors (docs/onnx.md, "Tensors").
//
// Reading takes what ONNX writers produce: the little-endian `raw_data`, the
// typed fields (`float_data`; `int32_data` for int8, uint8 and the 16 bits of
// each float16/bfloat16; `int64_data`; `double_data`) or data stored outside
// the model (`data_location: EXTERNAL`) in a file of the model's folder.
// Every size is checked against the bytes present, and every byte count is
// charged to an InitializerBudget before anything is allocated or read.
// Writing always uses raw_data (little-endian, bit-exact).
//
// The protobuf classes are only forward-declared: this header compiles without
// libonnx's headers.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/tensor.hpp"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace nodeflow::onnx_io {

/// ONNX's TensorProto.DataType number of `dtype` (FLOAT = 1, UINT8 = 2,
/// INT8 = 3, INT64 = 7, FLOAT16 = 10, DOUBLE = 11, BFLOAT16 = 16; INT32 = 6 for
/// the internal Int32).
std::int32_t onnx_data_type(DType dtype);

/// The graph dtype of an ONNX data type number, or nullopt when nodeflow has
/// none (INT32, BOOL, STRING, ..., and numbers ONNX does not define).
std::optional<DType> graph_dtype_of(std::int32_t data_type);

/// "INT32 (6)", "BOOL (9)", "data type 99": an ONNX data type for messages.
std::string onnx_data_type_name(std::int32_t data_type);

/// UnsupportedDType "<where>: ONNX data type INT32 (6) is not supported
/// (nodeflow takes FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, UINT8, INT64)".
[[noreturn]] void refuse_data_type(std::int32_t data_type, const std::string& where);

/// The bytes all initializers of one model may hold together
/// (ReadOptions::max_initializer_bytes); charged before any is allocated.
class InitializerBudget {
 public:
  explicit InitializerBudget(std::uint64_t limit) : limit_(limit) {}
  /// Adds the bytes of a `shape` `dtype` tensor; throws InvalidGraph
  /// "<where>.dims: [200000, 50000] float32 needs 40000000000 bytes, over the
  /// model's limit of ..." when the total would pass the limit.
  void charge(const Shape& shape, DType dtype, const std::string& where);
  std::uint64_t used() const { return used_; }

 private:
  std::uint64_t limit_;
  std::uint64_t used_ = 0;
};

/// Where a tensor's values are, once its form and sizes were checked
/// (plan_tensor); build_tensor reads them.
struct TensorPlan {
  DType dtype = DType::Float32;
  Shape shape;
  std::uint64_t bytes = 0;  ///< element count x dtype size
  /// EXTERNAL data: the file (inside the model's folder) and the byte range.
  std::optional<std::filesystem::path> external_file;
  std::uint64_t external_offset = 0;
};

/// Checks `proto` without allocating its tensor: a nodeflow dtype
/// (refuse_data_type otherwise), dims >= 0 whose element and byte counts fit
/// int64, no `segment`, exactly one source of values (raw_data, the typed
/// field of its data type, or EXTERNAL data), holding exactly the tensor's
/// elements, and typed values that fit the dtype (int32_data 300 for an int8).
/// External data: `location` relative to `model_dir`, without `..`, not
/// absolute, and still inside `model_dir` once symbolic links are followed; a
/// regular file whose size covers `offset` + `length` (decimal, both
/// optional) and whose range holds exactly the tensor's bytes. An empty
/// `model_dir` refuses external data. `where` prefixes every message
/// ("graph.initializer[2] (w)"): InvalidGraph, IoError for files that cannot
/// be read, UnsupportedDType for data types, ShapeMismatch for overflows.
TensorPlan plan_tensor(const onnx::TensorProto& proto, const std::string& where,
                       const std::filesystem::path& model_dir);

/// The tensor of a plan_tensor plan: the values of `proto` (or of its external
/// file, read again and checked to have kept its size).
Tensor build_tensor(const onnx::TensorProto& proto, const TensorPlan& plan,
                    const std::string& where);

/// plan_tensor, budget.charge, build_tensor.
Tensor read_tensor(const onnx::TensorProto& proto, const std::string& where,
                   const std::filesystem::path& model_dir, InitializerBudget& budget);

/// Fills `proto` with `tensor`: name, dims, data type and raw_data
/// (little-endian). Int32 (internal) is written as ONNX INT32.
void write_tensor(const Tensor& tensor, const std::string& name, onnx::TensorProto& proto);

/// A serialized TensorProto (the `input_0.pb` / `output_0.pb` files of ONNX's
/// test data) -> Tensor, within `max_bytes` (ReadOptions::max_initializer_bytes).
/// External data are read relative to `dir`. Throws as plan_tensor does, and
/// InvalidGraph "<source>: not a TensorProto (...)" when the bytes do not parse.
Tensor parse_tensor_proto(std::string_view bytes, const std::string& source,
                          const std::filesystem::path& dir, std::uint64_t max_bytes);

/// `tensor` as a serialized TensorProto named `name`.
std::string serialize_tensor_proto(const Tensor& tensor, const std::string& name);

}  // namespace nodeflow::onnx_io
