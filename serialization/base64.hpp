#pragma once
// Base64 (RFC 4648 section 4, standard alphabet, '=' padding): the form in
// which graph documents carry raw little-endian tensor bytes, NaN and
// infinities included (docs/graph-format.md, "data as base64").
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nodeflow {

/// Padded base64 of `bytes` (4 * ceil(n / 3) characters).
std::string encode_base64(std::span<const std::byte> bytes);

/// Strict decoder: the length must be a multiple of 4, only the standard
/// alphabet, at most two '=' and only at the end, and the unused bits of the
/// last character must be zero (so every byte string has one encoding).
/// No whitespace. Throws Error naming the first offending offset.
std::vector<std::byte> decode_base64(std::string_view text);

}  // namespace nodeflow
