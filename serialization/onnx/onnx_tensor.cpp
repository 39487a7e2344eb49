#include "serialization/onnx/onnx_tensor.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>
#include <vector>

#include <onnx/onnx_pb.h>  // onnx-ml.pb.h (ONNX_ML), with the ONNX_API it needs

#include "core/attributes.hpp"
#include "core/errors.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/onnx/detail/proto_parse.hpp"

namespace nodeflow::onnx_io {
namespace {

namespace fs = std::filesystem;

// TensorProto.DataType (onnx/onnx.proto).
enum OnnxType : std::int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
};

constexpr const char* kTypeNames[] = {
    "UNDEFINED", "FLOAT",  "UINT8",        "INT8",           "UINT16",      "INT16",
    "INT32",     "INT64",  "STRING",       "BOOL",           "FLOAT16",     "DOUBLE",
    "UINT32",    "UINT64", "COMPLEX64",    "COMPLEX128",     "BFLOAT16",    "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1"};

std::string dtype_text(DType t) { return std::string(dtype_name(t)); }

/// 'name', escaped for a terminal. (Built by appending: GCC 12's -Wrestrict
/// misfires on "'" + std::string.)
std::string quoted(const std::string& text) {
  std::string out(1, '\'');
  out += printable(text, 200);
  out += '\'';
  return out;
}

/// The typed field a data type keeps its values in, for messages.
const char* typed_field_of(std::int32_t type) {
  switch (type) {
    case kFloat: return "float_data";
    case kInt64: return "int64_data";
    case kDouble: return "double_data";
    case kUint32:
    case kUint64: return "uint64_data";
    case kString: return "string_data";
    default: return "int32_data";
  }
}

/// The typed fields that hold values, with their counts.
struct TypedCounts {
  int float_data, int32_data, int64_data, double_data, uint64_data, string_data;
};

TypedCounts typed_counts(const onnx::TensorProto& p) {
  return {p.float_data_size(), p.int32_data_size(), p.int64_data_size(),
          p.double_data_size(), p.uint64_data_size(), p.string_data_size()};
}

/// The typed fields that are not empty: "float_data", "int64_data and double_data".
std::vector<std::string> filled_typed_fields(const TypedCounts& c) {
  std::vector<std::string> out;
  if (c.float_data) out.push_back("float_data");
  if (c.int32_data) out.push_back("int32_data");
  if (c.int64_data) out.push_back("int64_data");
  if (c.double_data) out.push_back("double_data");
  if (c.uint64_data) out.push_back("uint64_data");
  if (c.string_data) out.push_back("string_data");
  return out;
}

int count_of(const TypedCounts& c, const std::string& field) {
  if (field == "float_data") return c.float_data;
  if (field == "int32_data") return c.int32_data;
  if (field == "int64_data") return c.int64_data;
  if (field == "double_data") return c.double_data;
  if (field == "uint64_data") return c.uint64_data;
  return c.string_data;
}

/// Reverses the bytes of each element on a big-endian machine: ONNX keeps
/// raw_data (and external data) little-endian.
void to_native_order(std::byte* data, std::size_t bytes, std::size_t item) {
  if constexpr (std::endian::native == std::endian::big) {
    for (std::size_t i = 0; i + item <= bytes; i += item) std::reverse(data + i, data + i + item);
  } else {
    (void)data;
    (void)bytes;
    (void)item;
  }
}

/// A non-negative decimal integer of external_data (offset, length).
std::uint64_t parse_decimal(const std::string& text, const std::string& where) {
  if (text.empty() || text.size() > 19 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw InvalidGraph(where + ": expected a non-negative decimal integer, got '" +
                       printable(text, 40) + "'");
  return std::stoull(text);
}

std::string system_reason(int error) { return std::error_code(error, std::generic_category()).message(); }

/// An open file descriptor, closed on destruction.
class File {
 public:
  explicit File(int fd) : fd_(fd) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

/// The external data file `location` names, checked to be inside `model_dir`.
fs::path external_path(const std::string& location, const fs::path& model_dir,
                       const std::string& where) {
  const std::string at = where + ".external_data.location";
  if (model_dir.empty())
    throw InvalidGraph(at + ": the tensor's data are in an external file, but the model has no "
                            "folder to read it from (it was not read from a file)");
  if (location.empty()) throw InvalidGraph(at + ": the location of external data is empty");
  if (location.find('\0') != std::string::npos)
    throw InvalidGraph(at + ": the location '" + printable(location, 200) +
                       "' contains a NUL character");
  const fs::path relative(location);
  const std::string shown = quoted(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory())
    throw InvalidGraph(at + ": " + shown +
                       " is an absolute path; external data must be in the model's folder, named "
                       "relative to it");
  for (const auto& part : relative)
    if (part == "..")
      throw InvalidGraph(at + ": " + shown +
                         " leaves the model's folder ('..'); external data must be in the model's "
                         "folder");
  std::error_code ec;
  const fs::path base = fs::canonical(model_dir, ec);
  if (ec)
    throw IoError(at + ": cannot resolve the model's folder '" +
                  printable(model_dir.string(), 200) + "': " + ec.message());
  const fs::path file = fs::canonical(base / relative, ec);
  if (ec) throw IoError(at + ": cannot open external data file " + shown + ": " + ec.message());
  const fs::path inside = file.lexically_relative(base);
  if (inside.empty() || *inside.begin() == ".." || inside == ".")
    throw InvalidGraph(at + ": " + shown +
                       " leads outside the model's folder through a symbolic link; external data "
                       "must be in the model's folder");
  return file;
}

/// Opens `file` for reading and returns its size; regular files only.
std::uint64_t open_external(const fs::path& file, const std::string& where, int& fd_out) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    throw IoError(where + ": cannot open external data file '" + printable(file.string(), 200) +
                  "': " + system_reason(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int error = errno;
    ::close(fd);
    throw IoError(where + ": external data file '" + printable(file.string(), 200) + "' " +
                  (S_ISREG(st.st_mode) ? "cannot be examined: " + system_reason(error)
                                       : std::string("is not a regular file")));
  }
  fd_out = fd;
  return static_cast<std::uint64_t>(st.st_size);
}

/// The external-data entries of `proto` checked, the file opened: path and range.
void plan_external(const onnx::TensorProto& proto, const std::string& where,
                   const fs::path& model_dir, TensorPlan& plan) {
  std::optional<std::string> location;
  std::optional<std::uint64_t> offset, length;
  for (int i = 0; i < proto.external_data_size(); ++i) {
    const auto& entry = proto.external_data(i);
    const std::string at = where + ".external_data[" + std::to_string(i) + "] (" +
                           printable(entry.key(), 40) + ")";
    const auto once = [&](bool seen) {
      if (seen) throw InvalidGraph(at + ": the key '" + entry.key() + "' is given twice");
    };
    if (entry.key() == "location") {
      once(location.has_value());
      location = entry.value();
    } else if (entry.key() == "offset") {
      once(offset.has_value());
      offset = parse_decimal(entry.value(), at);
    } else if (entry.key() == "length") {
      once(length.has_value());
      length = parse_decimal(entry.value(), at);
    } else if (entry.key() != "checksum") {
      throw InvalidGraph(at + ": unknown external_data key '" + printable(entry.key(), 40) +
                         "' (known: location, offset, length, checksum)");
    }
  }
  if (!location) throw InvalidGraph(where + ".external_data: no 'location' entry");
  const fs::path file = external_path(*location, model_dir, where);
  int fd = -1;
  const std::uint64_t size = open_external(file, where, fd);
  File guard(fd);
  const std::uint64_t begin = offset.value_or(0);
  if (begin > size)
    throw InvalidGraph(where + ".external_data: offset " + std::to_string(begin) +
                       " is past the end of '" + printable(*location, 200) + "' (" +
                       std::to_string(size) + " bytes)");
  const std::uint64_t count = length.value_or(size - begin);
  if (count > size - begin)
    throw InvalidGraph(where + ".external_data: offset " + std::to_string(begin) + " + length " +
                       std::to_string(count) + " passes the end of '" + printable(*location, 200) +
                       "' (" + std::to_string(size) + " bytes)");
  if (count != plan.bytes)
    throw InvalidGraph(where + ".external_data: the range holds " + std::to_string(count) +
                       " bytes, " + to_string(plan.shape) + " " + dtype_text(plan.dtype) +
                       " needs " + std::to_string(plan.bytes));
  plan.external_file = file;
  plan.external_offset = begin;
}

void read_external(const TensorPlan& plan, const std::string& where, Tensor& out) {
  int fd = -1;
  const std::uint64_t size = open_external(*plan.external_file, where, fd);
  File guard(fd);
  if (size < plan.external_offset || size - plan.external_offset < plan.bytes)
    throw IoError(where + ": external data file '" + printable(plan.external_file->string(), 200) +
                  "' shrank while it was read");
  std::uint64_t done = 0;
  while (done < plan.bytes) {
    const std::size_t chunk =
        static_cast<std::size_t>(std::min<std::uint64_t>(plan.bytes - done, 1u << 30));
    const ssize_t n = ::pread(fd, out.raw() + done, chunk,
                              static_cast<off_t>(plan.external_offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw IoError(where + ": cannot read external data file '" +
                    printable(plan.external_file->string(), 200) +
                    "': " + (n < 0 ? system_reason(errno) : std::string("unexpected end of file")));
    done += static_cast<std::uint64_t>(n);
  }
  to_native_order(out.raw(), plan.bytes, dtype_size(plan.dtype));
}

/// The range int32_data values of `dtype` must lie in, and the words for it.
struct Int32Range {
  std::int64_t lo, hi;
  const char* what;
};

Int32Range int32_range(DType dtype) {
  switch (dtype) {
    case DType::Int8: return {-128, 127, "an int8"};
    case DType::UInt8: return {0, 255, "a uint8"};
    case DType::Float16: return {0, 65535, "the 16 bits of a float16"};
    default: return {0, 65535, "the 16 bits of a bfloat16"};
  }
}

void check_int32_data(const onnx::TensorProto& proto, DType dtype, const std::string& where) {
  const Int32Range r = int32_range(dtype);
  for (int i = 0; i < proto.int32_data_size(); ++i)
    if (const std::int32_t v = proto.int32_data(i); v < r.lo || v > r.hi)
      throw InvalidGraph(where + ".int32_data[" + std::to_string(i) + "]: " + std::to_string(v) +
                         " is not " + r.what + " (" + std::to_string(r.lo) + " to " +
                         std::to_string(r.hi) + ")");
}

/// The values of an int32_data field (checked by check_int32_data).
template <typename T>
void copy_int32_data(const onnx::TensorProto& proto, T* out) {
  for (int i = 0; i < proto.int32_data_size(); ++i) {
    const std::int32_t v = proto.int32_data(i);
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      const auto bits = static_cast<std::uint16_t>(v);
      std::memcpy(static_cast<void*>(&out[i]), &bits, sizeof bits);  // the value's 16 bits
    } else
      out[i] = static_cast<T>(v);
  }
}

}  // namespace

std::int32_t onnx_data_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return kFloat;
    case DType::Float64: return kDouble;
    case DType::Float16: return kFloat16;
    case DType::BFloat16: return kBFloat16;
    case DType::Int8: return kInt8;
    case DType::UInt8: return kUint8;
    case DType::Int64: return kInt64;
    case DType::Int32: return kInt32;
  }
  return kUndefined;
}

std::optional<DType> graph_dtype_of(std::int32_t data_type) {
  for (DType t : kGraphDTypes)
    if (onnx_data_type(t) == data_type) return t;
  return std::nullopt;
}

std::string onnx_data_type_name(std::int32_t data_type) {
  constexpr auto known = static_cast<std::int32_t>(std::size(kTypeNames));
  if (data_type >= 0 && data_type < known)
    return std::string(kTypeNames[data_type]) + " (" + std::to_string(data_type) + ")";
  return "data type " + std::to_string(data_type);
}

void refuse_data_type(std::int32_t data_type, const std::string& where) {
  std::string known;
  for (DType t : kGraphDTypes)
    known += (known.empty() ? "" : ", ") +
             std::string(kTypeNames[static_cast<std::size_t>(onnx_data_type(t))]);
  throw UnsupportedDType(where + ": ONNX " + onnx_data_type_name(data_type) +
                         " is not supported (nodeflow takes " + known + ")");
}

void InitializerBudget::charge(const Shape& shape, DType dtype, const std::string& where) {
  const auto bytes = static_cast<std::uint64_t>(element_count(shape)) * dtype_size(dtype);
  if (bytes > limit_ || used_ > limit_ - bytes)
    throw InvalidGraph(where + ".dims: " + to_string(shape) + " " + dtype_text(dtype) + " needs " +
                       std::to_string(bytes) + " bytes, over the model's limit of " +
                       std::to_string(limit_) + " bytes for initializers" +
                       (used_ > 0 ? " (" + std::to_string(used_) + " already taken by earlier ones)"
                                  : std::string()) +
                       " (ReadOptions::max_initializer_bytes; on the command line "
                       "--max-initializer-bytes)");
  used_ += bytes;
}

TensorPlan plan_tensor(const onnx::TensorProto& proto, const std::string& where,
                       const fs::path& model_dir) {
  TensorPlan plan;
  if (!proto.has_data_type() || proto.data_type() == kUndefined)
    throw InvalidGraph(where + ".data_type: missing (the tensor's element type is not given)");
  const std::optional<DType> dtype = graph_dtype_of(proto.data_type());
  if (!dtype) refuse_data_type(proto.data_type(), where + ".data_type");
  plan.dtype = *dtype;
  for (int i = 0; i < proto.dims_size(); ++i) {
    if (proto.dims(i) < 0)
      throw InvalidGraph(where + ".dims[" + std::to_string(i) + "]: " +
                         std::to_string(proto.dims(i)) + " is negative");
    plan.shape.push_back(proto.dims(i));
  }
  const std::int64_t numel = element_count(plan.shape, where + ".dims");
  const auto item = static_cast<std::int64_t>(dtype_size(plan.dtype));
  if (numel > std::numeric_limits<std::int64_t>::max() / item)
    throw ShapeMismatch(where + ".dims: byte count of " + to_string(plan.shape) + " " +
                        dtype_text(plan.dtype) + " values overflows int64");
  plan.bytes = static_cast<std::uint64_t>(numel * item);
  if (proto.has_segment())
    throw InvalidGraph(where + ".segment: segmented tensors are not supported");

  const TypedCounts counts = typed_counts(proto);
  const std::vector<std::string> typed = filled_typed_fields(counts);
  const bool external = proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
  std::vector<std::string> sources = typed;
  if (proto.has_raw_data() && !(external && proto.raw_data().empty()))
    sources.insert(sources.begin(), "raw_data");
  if (external) sources.insert(sources.begin(), "external data");
  if (sources.size() > 1)
    throw InvalidGraph(where + ": the values are given twice (" + join(sources) +
                       "); a tensor holds them in one place");
  if (!external && proto.external_data_size() > 0)
    throw InvalidGraph(where + ".external_data: given, but data_location is not EXTERNAL");
  if (external) {
    plan_external(proto, where, model_dir, plan);
    return plan;
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != plan.bytes)
      throw InvalidGraph(where + ".raw_data: holds " + std::to_string(proto.raw_data().size()) +
                         " bytes, " + to_string(plan.shape) + " " + dtype_text(plan.dtype) +
                         " needs " + std::to_string(plan.bytes));
    return plan;
  }
  if (typed.empty()) {
    if (numel != 0)
      throw InvalidGraph(where + ": no values (neither raw_data nor " +
                         typed_field_of(proto.data_type()) + " nor external data) for " +
                         to_string(plan.shape) + " " + dtype_text(plan.dtype));
    return plan;
  }
  const std::string expected = typed_field_of(proto.data_type());
  if (typed.front() != expected)
    throw InvalidGraph(where + "." + typed.front() + ": holds the values of a " +
                       dtype_text(plan.dtype) + " tensor, which ONNX keeps in " + expected +
                       " (or raw_data)");
  if (count_of(counts, expected) != numel)
    throw InvalidGraph(where + "." + expected + ": holds " +
                       std::to_string(count_of(counts, expected)) + " values, " +
                       to_string(plan.shape) + " " + dtype_text(plan.dtype) + " needs " +
                       std::to_string(numel));
  if (expected == "int32_data") check_int32_data(proto, plan.dtype, where);
  return plan;
}

Tensor build_tensor(const onnx::TensorProto& proto, const TensorPlan& plan, const std::string& where) {
  Tensor t = Tensor::uninitialized(plan.dtype, plan.shape);
  if (plan.external_file) {
    read_external(plan, where, t);
    return t;
  }
  if (proto.has_raw_data()) {
    if (plan.bytes) std::memcpy(t.raw(), proto.raw_data().data(), plan.bytes);
    to_native_order(t.raw(), plan.bytes, dtype_size(plan.dtype));
    return t;
  }
  if (plan.bytes == 0) return t;
  switch (plan.dtype) {
    case DType::Float32: std::copy(proto.float_data().begin(), proto.float_data().end(), t.data<float>()); break;
    case DType::Float64: std::copy(proto.double_data().begin(), proto.double_data().end(), t.data<double>()); break;
    case DType::Int64: std::copy(proto.int64_data().begin(), proto.int64_data().end(), t.data<std::int64_t>()); break;
    case DType::Int8: copy_int32_data(proto, t.data<std::int8_t>()); break;
    case DType::UInt8: copy_int32_data(proto, t.data<std::uint8_t>()); break;
    case DType::Float16: copy_int32_data(proto, t.data<half>()); break;
    case DType::BFloat16: copy_int32_data(proto, t.data<bfloat16>()); break;
    case DType::Int32: break;  // not a graph dtype: plan_tensor refused it
  }
  return t;
}

Tensor read_tensor(const onnx::TensorProto& proto, const std::string& where,
                   const fs::path& model_dir, InitializerBudget& budget) {
  const TensorPlan plan = plan_tensor(proto, where, model_dir);
  budget.charge(plan.shape, plan.dtype, where);
  return build_tensor(proto, plan, where);
}

void write_tensor(const Tensor& tensor, const std::string& name, onnx::TensorProto& proto) {
  proto.Clear();
  proto.set_name(name);
  for (const std::int64_t d : tensor.shape()) proto.add_dims(d);
  proto.set_data_type(onnx_data_type(tensor.dtype()));
  std::string* raw = proto.mutable_raw_data();
  raw->assign(reinterpret_cast<const char*>(tensor.raw()), tensor.nbytes());
  to_native_order(reinterpret_cast<std::byte*>(raw->data()), raw->size(), dtype_size(tensor.dtype()));
}

Tensor parse_tensor_proto(std::string_view bytes, const std::string& source, const fs::path& dir,
                          std::uint64_t max_bytes) {
  onnx::TensorProto proto;
  detail::parse_bounded(proto, bytes, source, "TensorProto", kDefaultMaxModelStructureBytes);
  InitializerBudget budget(max_bytes);
  return read_tensor(proto, source, dir, budget);
}

std::string serialize_tensor_proto(const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  write_tensor(tensor, name, proto);
  return proto.SerializeAsString();
}


}  // namespace nodeflow::onnx_io
