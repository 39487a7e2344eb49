#include "serialization/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "core/errors.hpp"

namespace nodeflow {

struct GzipReader::Stream {
  z_stream z{};
  bool open = false;
  ~Stream() {
    if (open) inflateEnd(&z);
  }
};

namespace {

// 16 + MAX_WBITS: a gzip wrapper (not zlib's, not raw deflate), header and
// trailer checked by zlib.
constexpr int kGzipWindowBits = 16 + MAX_WBITS;
// zlib counts in uInt: feed it at most this much at a time.
constexpr std::size_t kChunk = std::size_t{1} << 30;

std::string zlib_reason(const z_stream& z, int code) {
  if (z.msg != nullptr) return z.msg;
  return code == Z_MEM_ERROR ? "out of memory" : "zlib error " + std::to_string(code);
}

}  // namespace

bool has_gzip_magic(std::span<const std::byte> bytes) {
  return bytes.size() >= 2 && bytes[0] == std::byte{0x1f} && bytes[1] == std::byte{0x8b};
}

GzipReader::GzipReader(std::span<const std::byte> compressed, std::string source)
    : stream_(std::make_unique<Stream>()), compressed_(compressed), source_(std::move(source)) {
  if (!has_gzip_magic(compressed_))
    throw IoError(source_ + ": not a gzip file (" +
                  (compressed_.size() < 2 ? std::string("fewer than 2 bytes")
                                          : std::string("it does not start with 1f 8b")) +
                  ")");
  z_stream& z = stream_->z;
  const int code = inflateInit2(&z, kGzipWindowBits);
  if (code != Z_OK) throw IoError(source_ + ": cannot start gzip decompression: " + zlib_reason(z, code));
  stream_->open = true;
}

GzipReader::~GzipReader() = default;

std::size_t GzipReader::consumed() const {
  const z_stream& z = stream_->z;
  if (z.next_in == nullptr) return 0;
  return static_cast<std::size_t>(reinterpret_cast<const std::byte*>(z.next_in) -
                                  compressed_.data());
}

std::size_t GzipReader::read(std::byte* out, std::size_t n) {
  z_stream& z = stream_->z;
  std::size_t done = 0;
  while (done < n && !finished_) {
    const std::size_t before = consumed();
    if (z.avail_in == 0) {
      z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(compressed_.data() + before));
      z.avail_in = static_cast<uInt>(std::min(kChunk, compressed_.size() - before));
    }
    const std::size_t want = std::min(kChunk, n - done);
    z.next_out = reinterpret_cast<Bytef*>(out + done);
    z.avail_out = static_cast<uInt>(want);
    const int code = inflate(&z, Z_NO_FLUSH);
    const std::size_t produced = want - z.avail_out;
    done += produced;
    const std::size_t used = consumed();
    if (code == Z_STREAM_END) {
      // Another member may follow (gzip files concatenate); only zero padding
      // after the last one is tolerated, as gunzip does.
      const std::span<const std::byte> rest = compressed_.subspan(used);
      if (std::all_of(rest.begin(), rest.end(), [](std::byte b) { return b == std::byte{0}; })) {
        finished_ = true;
        break;
      }
      if (!has_gzip_magic(rest))
        throw IoError(source_ + ": " + std::to_string(rest.size()) +
                      " bytes after the end of the gzip data that are not another gzip member");
      inflateReset(&z);
      continue;
    }
    const bool progress = produced > 0 || used > before;
    if (code == Z_OK || (code == Z_BUF_ERROR && progress)) continue;
    if (code == Z_BUF_ERROR && used == compressed_.size())
      throw IoError(source_ + ": the gzip data ends early (the file is truncated) after " +
                    std::to_string(position_ + done) + " decompressed bytes");
    throw IoError(source_ + ": corrupt gzip data after " + std::to_string(position_ + done) +
                  " decompressed bytes: " + zlib_reason(z, code));
  }
  position_ += done;
  return done;
}

std::string gunzip(std::span<const std::byte> compressed, const std::string& source,
                   std::size_t max_bytes) {
  GzipReader reader(compressed, source);
  std::string out;
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  for (;;) {
    const std::size_t at = out.size();
    // One byte past the limit tells "exactly max_bytes" from "more" (at never
    // passes max_bytes here: that threw below).
    const std::size_t left = max_bytes - at;
    const std::size_t room = left >= kBlock ? kBlock : left + 1;
    out.resize(at + room);
    const std::size_t got = reader.read(reinterpret_cast<std::byte*>(out.data() + at), room);
    out.resize(at + got);
    if (out.size() > max_bytes)
      throw IoError(source + ": decompresses to more than " + std::to_string(max_bytes) +
                    " bytes, the limit");
    if (got < room) return out;
  }
}

}  // namespace nodeflow
