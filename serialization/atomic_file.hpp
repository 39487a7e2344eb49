#pragma once
// Replacing files all at once (README, "Saving, fuzzing and benchmarks" and
// "The command line"). One mechanism for every save:
//
// - The bytes go to files in a private staging directory
//   `.nodeflow-stage-<random>` (mode 0700, owned by this process) made in the
//   target's directory, created with O_EXCL|O_NOFOLLOW: nothing another user
//   placed in that directory (a link, a FIFO at a name they predicted) is
//   opened, written or renamed into place, and a rename across file systems
//   (not atomic) is never needed.
// - Each file is flushed to disk before it is renamed over its target, and
//   the target's directory is flushed after the renames (failures reported).
// - The renames into a directory happen under an exclusive flock(2) on the
//   directory itself. A set of several files (AtomicFileGroup) first leaves a
//   commit record `.nodeflow-commit` in the directory, so that a set whose
//   writer is killed half-way through its renames is completed by the next
//   save into that directory before anything else is renamed there.
// - The owner of a staging directory holds a flock on it for its lifetime;
//   the first save of a process into a directory removes the staging
//   directories of processes that died (their flock is free).
// - Where the file system cannot flock a directory (NFS), saves go on without
//   the locks: concurrent sets may then mix, and staging directories of dead
//   processes stay.
//
// A reader of a target sees either the old file or the complete new one,
// never a prefix, even if the writer dies half-way (POSIX rename is atomic).
//
// A host process should ignore SIGXFSZ (`signal(SIGXFSZ, SIG_IGN)`, as the
// `nodeflow` command does): otherwise a write beyond the file-size limit
// (`ulimit -f`) kills the process without a message, where with the signal
// ignored the write fails with EFBIG and the save removes its staged file and
// throws IoError saying why.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>

namespace nodeflow {

/// Called after each block written to the staged file, with the number of
/// bytes written so far. A hook that throws aborts the save exactly as a failed
/// write would: tests use it to inject a failure half-way through a save.
using WriteProgress = std::function<void(std::size_t bytes_written)>;

/// Bytes written between two calls of a WriteProgress hook.
inline constexpr std::size_t kWriteBlockSize = 64 * 1024;

/// Names of a save's bookkeeping entries in the target's directory: the
/// staging directories (this prefix plus 12 random letters and digits) and the
/// commit record of a set whose renames are under way.
inline constexpr std::string_view kStageDirectoryPrefix = ".nodeflow-stage-";
inline constexpr std::string_view kCommitRecordName = ".nodeflow-commit";
/// The manifest of a command's last complete set of outputs (apps/output_files.hpp).
/// Like the two names above, a save refuses it as a target (links followed),
/// except as the marker of an AtomicFileGroup.
inline constexpr std::string_view kOutputsManifestName = ".nodeflow-outputs.json";

/// Writes `bytes` to `path` atomically. When `path` is a symbolic link, the
/// file it finally points to is replaced (created if the link dangles) and the
/// link stays (final_target says which links are followed). The new file
/// takes the permission bits (0777) of an existing target of the same owner,
/// else 0666 less the umask: never setuid/setgid, never the mode of a file
/// someone else planted. On any failure, including an exception from `progress` or
/// EFBIG from the file-size limit, the staged file is removed, `path` is left
/// as it was and the exception propagates; system failures throw IoError
/// naming `path`, the step and the system's reason. When the directory cannot
/// be flushed after the rename, IoError says so (the new file is then in
/// place but may not survive a crash). Refuses what check_replaceable refuses,
/// and a file name longer than the file system allows, before writing
/// anything. Safe to call from several threads and processes at once.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                           const WriteProgress& progress = {});

/// Several files of one directory replaced together as a set (a command's
/// outputs): add() writes each to the group's staging directory, and commit()
/// renames them all over their targets only once every one is complete, so a
/// failure while writing (a full disk, a name the file system refuses) leaves
/// every target as it was. Sets committed into one directory by concurrent
/// processes never mix: each commit renames all of its files under the
/// directory's lock. A commit killed half-way is completed by the next save
/// into the directory (the commit record above). Staged files not committed
/// are removed on destruction.
class AtomicFileGroup {
 public:
  /// A set of files in `directory` ("" for the current one), which must
  /// exist when the first file is added.
  explicit AtomicFileGroup(const std::filesystem::path& directory);
  ~AtomicFileGroup();
  AtomicFileGroup(const AtomicFileGroup&) = delete;
  AtomicFileGroup& operator=(const AtomicFileGroup&) = delete;

  /// Stages `bytes` for `path` (links followed as write_file_atomically
  /// does). Throws as write_file_atomically does, and IoError when `path`
  /// (after links) is not in the group's directory or was added before.
  void add(const std::filesystem::path& path, std::string_view bytes);

  /// Stages the file that marks the set complete (a manifest): at commit its
  /// target is removed before the first rename and it is renamed last, so it
  /// exists only while every file of the set is in place. At most one per
  /// group; throws as add() does.
  void set_marker(const std::filesystem::path& path, std::string_view bytes);

  /// Flushes the staged files to disk (one syncfs(2) for the set), then
  /// renames them into place. Throws IoError if that fails: before the first
  /// rename, every target is left as it was; after it (a failing rename or
  /// directory flush), the set is completed by the next save into the
  /// directory and the message says so.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Throws IoError naming `path` unless saving to it replaces a regular file or
/// creates one: a directory, device, FIFO, pipe (`/dev/stdout` of a command
/// piped on) or socket in its place (after links) is refused, since the rename
/// would swap it for a regular file (/dev/null, when run as root); so are the
/// bookkeeping names above (a save there would corrupt the directory's next
/// save or a reader's check) and what final_target refuses.
/// write_file_atomically checks this itself; commands call it to check every
/// destination before doing any work.
void check_replaceable(const std::filesystem::path& path);

/// The file that saving to `path` replaces: `path` itself, or, when it is a
/// symbolic link (to another link, or dangling), the file it finally points to.
/// Throws IoError naming `path` when a link cannot be read or there are more
/// than 40 of them in a row (a loop); when a link belongs to another user than
/// this process's (root's links excepted), since whoever can write to a shared
/// directory could otherwise plant one at a name a command derives (OUT's
/// checkpoint) and have any file of ours replaced (the kernel's
/// protected_symlinks rule does not apply to links resolved by hand); and
/// when `path` or a link leads into /proc or /dev/fd (`/dev/stdout` is
/// /proc/self/fd/1): those name open files of this process, which a save by
/// name would replace rather than write to.
std::filesystem::path final_target(const std::filesystem::path& path);

}  // namespace nodeflow
