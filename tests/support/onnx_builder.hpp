#pragma once
// Hand-made ONNX models for the reader's and writer's tests: the protobuf
// classes of libonnx-dev (onnx/onnx-ml.pb.h), filled field by field, so that a
// test can state exactly what a hostile or an old model holds.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace nodeflow::testing::onnx_builder {

/// ONNX TensorProto.DataType numbers the tests use.
inline constexpr int kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7, kString = 8,
                     kFloat16 = 10, kDouble = 11, kBFloat16 = 16;

/// A model of IR `ir` importing the default domain at `opset`.
inline onnx::ModelProto model(int opset = 19, std::int64_t ir = 9) {
  onnx::ModelProto m;
  m.set_ir_version(ir);
  auto* import = m.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

/// A tensor value info; a dimension -1 becomes a dim_param.
inline void set_tensor_type(onnx::ValueInfoProto& v, int elem_type, const std::vector<std::int64_t>& dims) {
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const std::int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d < 0)
      dim->set_dim_param("N");
    else
      dim->set_dim_value(d);
  }
}

inline onnx::ValueInfoProto& add_input(onnx::ModelProto& m, const std::string& name,
                                       const std::vector<std::int64_t>& dims, int elem_type = kFloat) {
  auto* v = m.mutable_graph()->add_input();
  v->set_name(name);
  set_tensor_type(*v, elem_type, dims);
  return *v;
}

inline void add_output(onnx::ModelProto& m, const std::string& name) {
  m.mutable_graph()->add_output()->set_name(name);
}

inline onnx::NodeProto& add_node(onnx::ModelProto& m, const std::string& op_type,
                                 const std::string& name, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

inline void set_ints(onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (const std::int64_t v : values) a->add_ints(v);
}

inline void set_int(onnx::NodeProto& n, const std::string& name, std::int64_t value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

inline void set_float(onnx::NodeProto& n, const std::string& name, float value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

/// A float32 initializer holding `values` as raw_data (little-endian host).
inline onnx::TensorProto& add_float_initializer(onnx::ModelProto& m, const std::string& name,
                                                const std::vector<std::int64_t>& dims,
                                                const std::vector<float>& values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(kFloat);
  for (const std::int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return *t;
}

inline void add_metadata(onnx::ModelProto& m, const std::string& key, const std::string& value) {
  auto* e = m.add_metadata_props();
  e->set_key(key);
  e->set_value(value);
}

/// x [1, 1, 4] -> MaxPool(kernel 2) -> y: the smallest valid model.
inline onnx::ModelProto max_pool_model(int opset = 19, std::int64_t ir = 9) {
  onnx::ModelProto m = model(opset, ir);
  add_input(m, "x", {1, 1, 4});
  set_ints(add_node(m, "MaxPool", "pool", {"x"}, {"y"}), "kernel_shape", {2});
  add_output(m, "y");
  return m;
}

inline std::string bytes(const onnx::ModelProto& m) { return m.SerializeAsString(); }

}  // namespace nodeflow::testing::onnx_builder
