#pragma once
// Exact comparison of graph descriptions and tensors, for round-trip tests:
// tensors compare by dtype, shape and every bit (NaN payloads and -0.0 included).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/graph.hpp"

namespace nodeflow::testing {

/// Same dtype, shape and bytes.
::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b);

/// Every field of both descriptions equal, tensors bit for bit; the message
/// names the first difference.
::testing::AssertionResult same_graph_def(const GraphDef& a, const GraphDef& b);

/// Same names and bit-identical tensors.
::testing::AssertionResult same_tensors(const std::map<std::string, Tensor>& a,
                                        const std::map<std::string, Tensor>& b);

}  // namespace nodeflow::testing
