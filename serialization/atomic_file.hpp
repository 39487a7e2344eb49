#pragma once
// Replacing a file all at once: the bytes go to a temporary file next to the
// target, which is flushed to disk and then renamed over it. A reader of the
// target sees either the old file or the complete new one, never a prefix,
// even if the process dies half-way (POSIX rename is atomic).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>

namespace nodeflow {

/// Called after each block written to the temporary file, with the number of
/// bytes written so far. A hook that throws aborts the save exactly as a failed
/// write would: tests use it to inject a failure half-way through a save.
using WriteProgress = std::function<void(std::size_t bytes_written)>;

/// Bytes written between two calls of a WriteProgress hook.
inline constexpr std::size_t kWriteBlockSize = 64 * 1024;

/// Writes `bytes` to `path` atomically. When `path` is a symbolic link, the
/// file it finally points to is replaced (created if the link dangles) and the
/// link stays. The temporary file is `.<file name>.tmp-<pid>-<n>` (at most
/// the file name's first 200 bytes, so that it fits NAME_MAX) in the
/// target's directory (a rename across file systems would not be atomic),
/// created exclusively; it takes the mode of an existing target, else 0666
/// less the umask. On any failure, including an
/// exception from `progress`, the temporary file is removed, `path` is left as
/// it was and the exception propagates; system failures throw IoError naming
/// `path`, the step and the system's reason. Refuses what check_replaceable
/// refuses, and a file name longer than the file system allows, before
/// writing anything.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                           const WriteProgress& progress = {});

/// Several files replaced together (a command's outputs): add() writes each
/// to its temporary file as write_file_atomically does, and commit() renames
/// them all over their targets only once every one is complete, so a failure
/// while writing (a full disk, a name the file system refuses) leaves every
/// target as it was. Temporary files not committed are removed on
/// destruction. add() throws as write_file_atomically does; commit() throws
/// IoError if a rename fails (the files renamed before it stay replaced).
class AtomicFileGroup {
 public:
  AtomicFileGroup();
  ~AtomicFileGroup();
  AtomicFileGroup(const AtomicFileGroup&) = delete;
  AtomicFileGroup& operator=(const AtomicFileGroup&) = delete;

  void add(const std::filesystem::path& path, std::string_view bytes);
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Throws IoError naming `path` unless saving to it replaces a regular file or
/// creates one: a directory, device, FIFO or socket in its place (after
/// links) is refused, since the rename would swap it for a regular file
/// (/dev/null, when run as root). write_file_atomically checks this itself;
/// commands call it to check every destination before doing any work.
void check_replaceable(const std::filesystem::path& path);

/// The file that saving to `path` replaces: `path` itself, or, when it is a
/// symbolic link (to another link, or dangling), the file it finally points to.
/// Throws IoError naming `path` when a link cannot be read or there are more
/// than 40 of them in a row (a loop).
std::filesystem::path final_target(const std::filesystem::path& path);

}  // namespace nodeflow
