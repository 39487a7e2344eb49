#pragma once
// NumPy .npy files (format 1.0 and 2.0), the on-disk form of tensors
// (docs/graph-format.md, "Tensor files (.npy)"; the format itself is numpy's
// numpy/lib/format.py, NEP 1).
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

#include "core/tensor.hpp"

namespace nodeflow {

/// Parses a whole .npy file held in memory.
///
/// Accepted dtypes: `<f4 <f8 <f2 <i8` and the one-byte `|i1 |u1` (also spelled
/// `<i1 >i1 <u1 >u1`). Big-endian files (`>f4`, ...) are byte-swapped and
/// Fortran-order files are transposed, so the result is always a native, C-order
/// (row-major) tensor of dtype float32, float64, float16, int8, uint8 or int64;
/// reading never yields bfloat16 (bfloat16 travels as float32; the caller casts).
/// Every size in the header is checked for overflow and against the bytes
/// present before anything is allocated; the data must fill the rest of the
/// file exactly.
/// Throws IoError naming `source` and what is wrong (bad magic, unsupported
/// version or dtype, malformed header dictionary, truncated data, trailing bytes).
Tensor parse_npy(std::span<const std::byte> bytes, const std::string& source);

/// Reads a .npy file (see parse_npy), or a pipe or device (`<(...)`,
/// /dev/stdin), whose data is read as it arrives, up to what the header
/// announces. Throws IoError if it cannot be read or is malformed; the message
/// names the path.
Tensor read_npy(const std::filesystem::path& path);

/// Writes `tensor` as a format 1.0 .npy file (2.0 if the header needs it),
/// little-endian, C order. bfloat16 tensors are written as `<f4` holding the
/// bfloat16 values exactly. Written with write_file_atomically (a temporary file
/// in the same directory, synced, then renamed over `path`), so `path` never
/// holds a partially written file. Throws IoError (naming the path, the step and
/// the system's reason) on failure; the temporary file is removed and an
/// existing `path` keeps its old content.
void write_npy(const std::filesystem::path& path, const Tensor& tensor);

/// The complete bytes write_npy puts in a file (header and data).
std::string encode_npy(const Tensor& tensor);

}  // namespace nodeflow
