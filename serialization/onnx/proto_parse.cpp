#include "serialization/onnx/detail/proto_parse.hpp"

#include <climits>
#include <map>
#include <memory>
#include <mutex>

#include <google/protobuf/io/coded_stream.h>

#include "core/errors.hpp"

namespace nodeflow::onnx_io::detail {
namespace {

namespace pb = google::protobuf;

// What a std::string and an unknown field's entry take besides their contents.
constexpr std::uint64_t kStringBytes = sizeof(std::string);
constexpr std::uint64_t kUnknownFieldBytes = 2 * sizeof(std::string);

/// The size of a message object of `d`'s type, once per type.
std::uint64_t object_bytes(const pb::Descriptor& d) {
  static std::mutex mutex;
  static std::map<const pb::Descriptor*, std::uint64_t> sizes;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = sizes.find(&d);
  if (it != sizes.end()) return it->second;
  const pb::Message* prototype = pb::MessageFactory::generated_factory()->GetPrototype(&d);
  const std::uint64_t size = prototype ? prototype->SpaceUsedLong() : 256;
  sizes.emplace(&d, size);
  return size;
}

bool read_varint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const std::uint8_t byte = *p++;
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

/// Adds the structure of the message in [p, end) to `total`; false when the
/// bytes are malformed or nest too deeply (the parser reports them) or the
/// total passed `stop`.
bool walk(const std::uint8_t* p, const std::uint8_t* end, const pb::Descriptor& d, int depth,
          std::uint64_t stop, std::uint64_t& total) {
  while (p < end) {
    std::uint64_t tag = 0;
    if (!read_varint(p, end, tag)) return false;
    const auto number = static_cast<int>(tag >> 3);
    const pb::FieldDescriptor* field = tag >> 3 <= INT_MAX ? d.FindFieldByNumber(number) : nullptr;
    if (!field) total += kUnknownFieldBytes;
    switch (tag & 7) {
      case 0: {
        std::uint64_t ignored = 0;
        if (!read_varint(p, end, ignored)) return false;
        break;
      }
      case 1:
        if (end - p < 8) return false;
        p += 8;
        break;
      case 5:
        if (end - p < 4) return false;
        p += 4;
        break;
      case 2: {
        std::uint64_t length = 0;
        if (!read_varint(p, end, length) || length > static_cast<std::uint64_t>(end - p)) return false;
        if (field && field->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
          total += object_bytes(*field->message_type());
          if (total > stop || depth + 1 > kRecursionLimit) return false;
          if (!walk(p, p + length, *field->message_type(), depth + 1, stop, total)) return false;
        } else if (field && (field->type() == pb::FieldDescriptor::TYPE_STRING ||
                             field->type() == pb::FieldDescriptor::TYPE_BYTES)) {
          total += kStringBytes;
        }
        p += length;  // packed scalars: at most 8 bytes per byte of the file
        break;
      }
      default:
        return false;  // groups (ONNX has none) and invalid wire types
    }
    if (total > stop) return false;
  }
  return true;
}

/// True when `bytes` parse as one `message` within `recursion_limit` levels.
bool parse_with_limit(pb::Message& message, std::string_view bytes, int recursion_limit) {
  message.Clear();
  pb::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                              static_cast<int>(bytes.size()));
  in.SetRecursionLimit(recursion_limit);
  in.SetTotalBytesLimit(static_cast<int>(bytes.size()));
  return message.MergePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

}  // namespace

std::uint64_t structure_bytes(std::string_view bytes, const pb::Descriptor& descriptor,
                              std::uint64_t stop) {
  std::uint64_t total = object_bytes(descriptor);
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  walk(p, p + bytes.size(), descriptor, 0, stop, total);
  return total;
}

void parse_bounded(pb::Message& message, std::string_view bytes, const std::string& what,
                   const std::string& type, std::uint64_t max_structure_bytes) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    throw InvalidGraph(what + ": " + std::to_string(bytes.size()) +
                       " bytes, more than a protobuf message can hold (2 GiB - 1); keep large "
                       "weights as external data");
  if (const std::uint64_t need = structure_bytes(bytes, *message.GetDescriptor(), max_structure_bytes);
      need > max_structure_bytes)
    throw InvalidGraph(what + ": parsing its " + std::to_string(bytes.size()) +
                       " bytes would take more than " + std::to_string(max_structure_bytes) +
                       " bytes for the messages, names and lists they hold, over the reader's "
                       "limit (ReadOptions::max_model_structure_bytes)");
  if (parse_with_limit(message, bytes, kRecursionLimit)) return;
  // Protobuf does not say why it stopped. A second try with a deeper (still
  // small) limit tells a file that only nests too deeply apart.
  const std::unique_ptr<pb::Message> probe(message.New());
  const bool deeper = parse_with_limit(*probe, bytes, 2 * kRecursionLimit);
  message.Clear();
  const std::string levels = std::to_string(kRecursionLimit) + " levels";
  if (deeper)
    throw InvalidGraph(what + ": not a valid " + type + " (it nests messages deeper than " +
                       levels + ")");
  throw InvalidGraph(what + ": not a valid " + type + " (" + std::to_string(bytes.size()) +
                     " bytes that are truncated or malformed protobuf, or nest messages deeper "
                     "than " + levels + ")");
}

}  // namespace nodeflow::onnx_io::detail
