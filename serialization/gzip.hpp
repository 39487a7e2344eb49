#pragma once
// Reading gzip files (RFC 1952) held in memory, through zlib: the form Debian's
// dataset packages ship their IDX files in (docs/training-config.md, "Datasets").
#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace nodeflow {

/// The decompressed bytes of a gzip file, read in order. Members written one
/// after the other (as `cat a.gz b.gz` makes them) are one stream, as gunzip
/// reads them. Each member's CRC-32 and length are checked when its end is
/// reached, so a stream read to its end (read() returning fewer bytes than
/// asked) was whole and intact.
class GzipReader {
 public:
  /// Reads `compressed`, which must outlive the reader; `source` names it in
  /// messages (a path).
  GzipReader(std::span<const std::byte> compressed, std::string source);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  /// Decompresses up to `n` bytes into `out` and returns how many: fewer than
  /// `n` only at the end of the last member. Throws IoError naming the source
  /// when the data is not gzip (wrong magic, bad header), is corrupt (zlib's
  /// reason: an invalid block, a CRC-32 or length mismatch), or ends in the
  /// middle of a member (a truncated file).
  std::size_t read(std::byte* out, std::size_t n);

  /// Decompressed bytes returned so far.
  std::size_t position() const { return position_; }

 private:
  std::size_t consumed() const;  // compressed bytes zlib has read
  struct Stream;
  std::unique_ptr<Stream> stream_;
  std::span<const std::byte> compressed_;
  std::string source_;
  std::size_t position_ = 0;
  bool finished_ = false;
};

/// The whole decompressed content of a gzip file held in memory. Throws
/// IoError as GzipReader::read does, and when it would exceed `max_bytes`
/// (a small file may decompress to gigabytes).
std::string gunzip(std::span<const std::byte> compressed, const std::string& source,
                   std::size_t max_bytes);

/// True when `bytes` starts with gzip's magic number (1f 8b).
bool has_gzip_magic(std::span<const std::byte> bytes);

}  // namespace nodeflow
