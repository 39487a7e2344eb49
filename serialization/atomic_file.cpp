#include "serialization/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

namespace fs = std::filesystem;

/// A file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  /// Closes now, returning close()'s result: a write error may surface only here.
  int close() { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_ = -1;
};

std::string reason(int error) { return std::strerror(error); }

[[noreturn]] void fail(const std::string& what, const std::string& step, int error) {
  throw IoError("cannot write " + what + ": " + step + ": " + reason(error));
}

fs::path directory_of(const fs::path& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// The names in a directory (not "." and ".."), read through a descriptor of
/// its own so that the caller's descriptor keeps its offset.
std::vector<std::string> entries_of(int dir_fd) {
  std::vector<std::string> names;
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return names;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return names;
  }
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

/// Removes a staging directory: the files in it, then itself. Best effort:
/// what cannot be removed stays for a later save to find.
void remove_stage(int dir_fd, const std::string& name, int stage_fd) {
  for (const std::string& entry : entries_of(stage_fd)) ::unlinkat(stage_fd, entry.c_str(), 0);
  ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR);
}

enum class Lock { taken, busy, unsupported };

/// flock(2), waiting unless LOCK_NB. `unsupported` where the file system
/// cannot lock a directory (NFS emulates flock with fcntl locks, which need
/// a file open for writing: EBADF): saves there go on without the lock, as
/// they did before there was one, so concurrent writers may mix and stale
/// staging directories are not recognized as such.
Lock lock(int fd, int operation) {
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return Lock::busy;
    if (errno == EBADF || errno == ENOLCK || errno == EOPNOTSUPP) return Lock::unsupported;
    throw std::system_error(errno, std::generic_category(), "flock");
  }
  return Lock::taken;
}

/// The directory a save renames into, opened once: the lock, the renames and
/// the flush all go through this descriptor, so they reach the directory that
/// was opened even if its path is changed meanwhile.
class TargetDirectory {
 public:
  TargetDirectory(fs::path path, const std::string& what) : path_(std::move(path)) {
    fd_ = Fd(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd_) fail(what, "open directory " + path_.string(), errno);
    if (::fstat(fd_.get(), &stat_) != 0) fail(what, "stat directory " + path_.string(), errno);
    const long name_max = ::fpathconf(fd_.get(), _PC_NAME_MAX);
    name_max_ = name_max > 0 ? static_cast<std::size_t>(name_max) : 255;
    // The birth time tells a directory from a later one given the same inode
    // number (a directory removed and made again), where the file system has one.
    struct statx sx {};
    if (::statx(fd_.get(), "", AT_EMPTY_PATH, STATX_BTIME, &sx) == 0 && (sx.stx_mask & STATX_BTIME))
      key_ = {stat_.st_dev, stat_.st_ino, sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec};
    else
      key_ = {stat_.st_dev, stat_.st_ino, 0, 0};
  }

  const fs::path& path() const { return path_; }
  int fd() const { return fd_.get(); }
  /// Which directory this is, for remembering it within the process.
  using Key = std::tuple<dev_t, ino_t, std::int64_t, std::uint32_t>;
  const Key& key() const { return key_; }

  bool holds(const fs::path& other) const {
    struct stat st {};
    return other == path_ || (::stat(other.c_str(), &st) == 0 && same_inode(st, stat_));
  }

  /// Refused now rather than at the rename, after other files of a set are replaced.
  void check_name(const std::string& name, const std::string& what) const {
    if (name.empty() || name == "." || name == "..")
      throw IoError("cannot write " + what + ": not a file name");
    if (name.size() > name_max_)
      throw IoError("cannot write " + what + ": the file name is " + std::to_string(name.size()) +
                    " bytes long, more than the file system allows (" +
                    std::to_string(name_max_) + ")");
  }

  /// Makes the renames done in the directory durable.
  void flush(const std::string& what) const {
    if (::fsync(fd_.get()) != 0)
      fail(what, "flush directory " + path_.string() + " to disk", errno);
  }

  std::string shown(std::string_view name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
  Fd fd_;
  struct stat stat_ {};
  Key key_{};
  std::size_t name_max_ = 255;
};

/// The exclusive lock on a directory that every save's renames into it hold.
class DirectoryLock {
 public:
  DirectoryLock(const TargetDirectory& dir, const std::string& what) : fd_(dir.fd()) {
    try {
      lock(fd_, LOCK_EX);
    } catch (const std::system_error& e) {
      fail(what, "lock directory " + dir.path().string(), e.code().value());
    }
  }
  ~DirectoryLock() { ::flock(fd_, LOCK_UN); }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_;
};

std::string random_letters(std::size_t count) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string bytes(count, '\0');
  for (std::size_t done = 0; done < count;) {
    const ::ssize_t n = ::getrandom(bytes.data() + done, count - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "getrandom");
    done += static_cast<std::size_t>(n);
  }
  for (char& c : bytes) c = kAlphabet[static_cast<unsigned char>(c) % kAlphabet.size()];
  return bytes;
}

/// A private directory in the target's directory holding the files of one
/// save until they are renamed into place. Its owner holds a flock on it, so
/// that another process can tell a dead owner's staging directory (flock
/// free) from a live one's. Removed with its files on destruction unless
/// kept (a commit record names it).
class Stage {
 public:
  Stage(const TargetDirectory& dir, const std::string& what) : dir_(dir) {
    for (int attempt = 0;; ++attempt) {
      if (attempt == 100)
        throw IoError("cannot write " + what + ": the staging directories made in " +
                      dir.path().string() + " kept vanishing (removed by another process?)");
      name_ = std::string(kStageDirectoryPrefix) + random_letters(12);
      // mkdirat with a random name is mkdtemp(3) relative to the directory's
      // descriptor; 0700 keeps other users out.
      if (::mkdirat(dir.fd(), name_.c_str(), 0700) != 0) {
        if (errno == EEXIST) continue;
        fail(what, "create a staging directory in " + dir.path().string(), errno);
      }
      fd_ = Fd(::openat(dir.fd(), name_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!fd_) {
        if (errno == ENOENT) continue;
        fail(what, "open staging directory " + dir.shown(name_), errno);
      }
      try {
        lock(fd_.get(), LOCK_EX);
      } catch (const std::system_error& e) {
        fail(what, "lock staging directory " + dir.shown(name_), e.code().value());
      }
      // Between mkdirat and flock, a save of another process may have taken
      // the new directory for a dead process's and removed it: then it is no
      // longer at its name, and the next attempt makes another.
      struct stat mine {}, there {};
      if (::fstat(fd_.get(), &mine) == 0 &&
          ::fstatat(dir.fd(), name_.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0 &&
          same_inode(mine, there))
        break;
    }
  }
  ~Stage() {
    if (!kept_ && !removed_) remove_stage(dir_.fd(), name_, fd_.get());
  }
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  const std::string& name() const { return name_; }
  int fd() const { return fd_.get(); }

  /// Writes `bytes` to a new file `file` of the stage (by default the next
  /// number), with the mode of the existing regular file `mode_of` in the
  /// target directory if there is one, else 0666 less the umask. `flush`
  /// syncs it to disk before it is closed.
  std::string write(std::string_view bytes, const std::string& mode_of, bool flush,
                    const WriteProgress& progress, const std::string& what,
                    std::string file = {}) {
    if (file.empty()) file = std::to_string(next_++);
    Fd fd(::openat(fd_.get(), file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0666));
    if (!fd) fail(what, "create a file in staging directory " + dir_.shown(name_), errno);
    struct stat existing {};
    if (!mode_of.empty() && ::fstatat(dir_.fd(), mode_of.c_str(), &existing, 0) == 0 &&
        S_ISREG(existing.st_mode) && existing.st_uid == ::geteuid() &&
        ::fchmod(fd.get(), existing.st_mode & 0777) != 0)
      fail(what, "chmod", errno);
    std::size_t done = 0;
    do {
      const std::size_t end = std::min(done + kWriteBlockSize, bytes.size());
      while (done < end) {
        const ::ssize_t n = ::write(fd.get(), bytes.data() + done, end - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail(what, "write", errno);
        if (n == 0) fail(what, "write", EIO);
        done += static_cast<std::size_t>(n);
      }
      if (progress) progress(done);
    } while (done < bytes.size());
    if (flush && ::fsync(fd.get()) != 0) fail(what, "flush to disk", errno);
    if (fd.close() != 0) fail(what, "close", errno);
    return file;
  }

  /// Flushes every file written so far, and the stage's own entries, at once:
  /// one syncfs(2) instead of one fsync per file (20,000 files took 20 s
  /// that way on ext4, each fsync committing its own journal transaction).
  void flush_all(const std::string& what) const {
    if (::syncfs(fd_.get()) != 0) fail(what, "flush the staged files to disk", errno);
  }

  void keep() { kept_ = true; }
  void remove() {
    remove_stage(dir_.fd(), name_, fd_.get());
    removed_ = true;
  }

 private:
  const TargetDirectory& dir_;
  std::string name_;
  Fd fd_;
  unsigned next_ = 0;
  bool kept_ = false;
  bool removed_ = false;
};

/// One staged file and where it goes.
struct StagedFile {
  std::string staged;  ///< name in the stage
  std::string target;  ///< name in the target directory
  std::string what;    ///< the path the caller gave, for messages
};

// --- The commit record ------------------------------------------------------
// Fields separated by NUL (file names hold any other byte): the format tag,
// the stage's name, then per step "u" NAME (remove NAME before the renames)
// or "r" STAGED TARGET (rename), in the order they are done.

constexpr std::string_view kRecordFormat = "nodeflow-commit-1";

struct CommitRecord {
  std::string stage;
  std::vector<std::string> removals;
  std::vector<std::pair<std::string, std::string>> renames;  ///< staged -> target
};

std::string encode(const CommitRecord& record) {
  std::string text;
  const auto field = [&](std::string_view value) {
    text += value;
    text += '\0';
  };
  field(kRecordFormat);
  field(record.stage);
  for (const auto& name : record.removals) {
    field("u");
    field(name);
  }
  for (const auto& [staged, target] : record.renames) {
    field("r");
    field(staged);
    field(target);
  }
  return text;
}

bool plain_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

/// nullopt when `text` is not a record this code wrote.
std::optional<CommitRecord> decode(std::string_view text) {
  std::vector<std::string_view> fields;
  while (!text.empty()) {
    const std::size_t end = text.find('\0');
    if (end == std::string_view::npos) return std::nullopt;
    fields.push_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  if (fields.size() < 2 || fields[0] != kRecordFormat ||
      !fields[1].starts_with(kStageDirectoryPrefix) || !plain_name(fields[1]))
    return std::nullopt;
  CommitRecord record{std::string(fields[1]), {}, {}};
  for (std::size_t i = 2; i < fields.size();) {
    if (fields[i] == "u" && i + 1 < fields.size() && plain_name(fields[i + 1]) &&
        record.renames.empty()) {
      record.removals.emplace_back(fields[i + 1]);
      i += 2;
    } else if (fields[i] == "r" && i + 2 < fields.size() && plain_name(fields[i + 1]) &&
               plain_name(fields[i + 2])) {
      record.renames.emplace_back(fields[i + 1], fields[i + 2]);
      i += 3;
    } else {
      return std::nullopt;
    }
  }
  return record;
}

std::string read_all(int fd) {
  std::string text;
  char block[65536];
  for (;;) {
    const ::ssize_t n = ::read(fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "read");
    if (n == 0) return text;
    text.append(block, static_cast<std::size_t>(n));
  }
}

/// Completes the set whose writer died during its renames (it held the
/// directory's lock: a commit record exists only from then until its renames
/// are done), before anything newer is renamed into the directory. Called
/// with the directory locked.
void complete_killed_set(const TargetDirectory& dir, const std::string& what) {
  const std::string record_path = dir.shown(kCommitRecordName);
  const auto refuse = [&](const std::string& problem) {
    throw IoError("cannot write " + what + ": " + record_path +
                  " (the commit record of a set of files whose writer was killed) " + problem +
                  "; remove it, and the staging directory it names, if no nodeflow process is "
                  "writing into " + dir.path().string());
  };
  Fd record_fd(::openat(dir.fd(), std::string(kCommitRecordName).c_str(),
                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!record_fd) {
    if (errno == ENOENT) return;
    refuse("cannot be opened: " + reason(errno));
  }
  struct stat st {};
  if (::fstat(record_fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) refuse("is not a regular file");
  if (st.st_uid != ::geteuid())
    refuse("belongs to another user (uid " + std::to_string(st.st_uid) + ")");
  std::optional<CommitRecord> record;
  try {
    record = decode(read_all(record_fd.get()));
  } catch (const std::system_error& e) {
    refuse("cannot be read: " + reason(e.code().value()));
  }
  if (!record) refuse("is not one nodeflow wrote");

  Fd stage(
      ::openat(dir.fd(), record->stage.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (stage) {
    if (lock(stage.get(), LOCK_EX | LOCK_NB) == Lock::busy)
      refuse("names " + record->stage + ", which a running process holds");
    // The renames are done in the record's order, so the last staged file
    // still being there means the set is not complete yet.
    struct stat last {};
    const bool unfinished =
        !record->renames.empty() && ::fstatat(stage.get(), record->renames.back().first.c_str(),
                                              &last, AT_SYMLINK_NOFOLLOW) == 0;
    if (unfinished) {
      for (const auto& name : record->removals)
        if (::unlinkat(dir.fd(), name.c_str(), 0) != 0 && errno != ENOENT)
          refuse("could not be completed: remove " + dir.shown(name) + ": " + reason(errno));
      if (!record->removals.empty()) dir.flush(what);
      for (const auto& [staged, target] : record->renames)
        if (::renameat(stage.get(), staged.c_str(), dir.fd(), target.c_str()) != 0 &&
            errno != ENOENT)
          refuse("could not be completed: rename into " + dir.shown(target) + ": " + reason(errno));
    }
  }
  dir.flush(what);
  ::unlinkat(dir.fd(), std::string(kCommitRecordName).c_str(), 0);
  if (stage) remove_stage(dir.fd(), record->stage, stage.get());
}

/// Removes the staging directories of dead processes (their flock is free)
/// the first time this process saves into `dir`: once, since every save
/// reading a large directory would make many saves into it quadratic. Called
/// with the directory locked, after complete_killed_set.
void remove_dead_stages_once(const TargetDirectory& dir, const std::string& own) {
  static std::mutex mutex;
  static std::set<TargetDirectory::Key> cleaned;
  {
    const std::lock_guard<std::mutex> guard(mutex);
    if (!cleaned.insert(dir.key()).second) return;
  }
  for (const std::string& name : entries_of(dir.fd())) {
    if (name == own || !name.starts_with(kStageDirectoryPrefix)) continue;
    Fd stage(::openat(dir.fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!stage || ::fstat(stage.get(), &st) != 0 || st.st_uid != ::geteuid()) continue;
    if (lock(stage.get(), LOCK_EX | LOCK_NB) != Lock::taken) continue;  // its owner is alive
    remove_stage(dir.fd(), name, stage.get());
  }
}

/// Renames the staged `files` over their targets, in order, under the
/// directory's lock, and flushes the directory. More than one file is a set:
/// a commit record lists the renames first, and with `marker` the last file
/// marks the set complete (its old version is removed before the renames).
void install(const TargetDirectory& dir, Stage& stage, const std::vector<StagedFile>& files,
             bool marker) {
  const std::string& what = files.front().what;
  const DirectoryLock locked(dir, what);
  complete_killed_set(dir, what);
  remove_dead_stages_once(dir, stage.name());

  const bool set = files.size() > 1;
  const std::string record_name(kCommitRecordName);
  if (set) {
    CommitRecord record{stage.name(), {}, {}};
    if (marker) record.removals.push_back(files.back().target);
    for (const StagedFile& file : files) record.renames.emplace_back(file.staged, file.target);
    stage.write(encode(record), {}, true, {}, what, "commit");
    if (::renameat(stage.fd(), "commit", dir.fd(), record_name.c_str()) != 0)
      fail(what, "write commit record " + dir.shown(record_name), errno);
    try {
      for (const auto& name : record.removals)
        if (::unlinkat(dir.fd(), name.c_str(), 0) != 0 && errno != ENOENT)
          fail(what, "remove " + dir.shown(name) + " before replacing the files it describes",
               errno);
      dir.flush(what);
    } catch (const IoError&) {
      // Nothing is renamed yet: the set is given up, not left for the next
      // save to complete, unless the record cannot be taken back.
      if (::unlinkat(dir.fd(), record_name.c_str(), 0) != 0) stage.keep();
      throw;
    }
    stage.keep();  // from here on, the record needs the stage
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (::renameat(stage.fd(), files[i].staged.c_str(), dir.fd(), files[i].target.c_str()) != 0) {
      const int error = errno;
      if (!set) fail(files[i].what, "rename into place", error);
      throw IoError("cannot write " + files[i].what + ": rename into place: " + reason(error) +
                    "; " + std::to_string(i) + " of the " + std::to_string(files.size()) +
                    " files of its set are replaced, and the next save into " +
                    dir.path().string() + " completes the set (remove " +
                    dir.shown(record_name) + " to give it up)");
    }
  }
  try {
    dir.flush(what);
  } catch (const IoError& e) {
    if (set) ::unlinkat(dir.fd(), record_name.c_str(), 0);
    stage.remove();
    throw IoError(std::string(e.what()) +
                  " (the new files are in place but may not survive a crash)");
  }
  // Not flushed: should the removal be lost in a crash, the next save finds
  // every rename of the record done and removes it again.
  if (set) ::unlinkat(dir.fd(), record_name.c_str(), 0);
  stage.remove();
}

/// Symbolic links cross before the final component is never more than this
/// (Linux's own limit, ELOOP).
constexpr int kMaxSymlinkHops = 40;

}  // namespace

// Renaming onto a link itself would turn it into a regular file and leave its
// target untouched.
std::filesystem::path final_target(const std::filesystem::path& path) {
  const auto refuse_descriptor_link = [&](const std::filesystem::path& p) {
    const std::string text = std::filesystem::absolute(p).lexically_normal().string();
    if (text.starts_with("/proc/") || text.starts_with("/dev/fd/"))
      throw IoError("cannot write " + path.string() +
                    (p == path ? "" : " (a link to " + p.string() + ")") +
                    ": it names an open file of this process, which a save would replace "
                    "instead of writing to it");
  };
  std::filesystem::path target = path;
  for (int hop = 0; hop <= kMaxSymlinkHops; ++hop) {
    refuse_descriptor_link(target);
    struct stat link {};
    if (::lstat(target.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return target;
    if (link.st_uid != ::geteuid() && link.st_uid != 0)
      throw IoError("cannot write " + path.string() + ": " +
                    (target == path ? std::string("it") : target.string()) +
                    " is a symbolic link of another user (uid " + std::to_string(link.st_uid) +
                    "); a save follows only its own user's and root's links");
    std::error_code ec;
    const std::filesystem::path next = std::filesystem::read_symlink(target, ec);
    if (ec)
      throw IoError("cannot write " + path.string() + ": read symbolic link " + target.string() +
                    ": " + ec.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  throw IoError("cannot write " + path.string() + ": more than " +
                std::to_string(kMaxSymlinkHops) + " symbolic links to follow (a loop?)");
}

namespace {

// A save onto the directory's own bookkeeping would corrupt the next save
// there (a commit record) or what a reader checks (the manifest).
void refuse_bookkeeping_name(const std::filesystem::path& link_or_file,
                             const std::filesystem::path& path, bool marker) {
  const std::string name = path.filename().string();
  const bool reserved = name == kCommitRecordName || name.starts_with(kStageDirectoryPrefix) ||
                        (!marker && name == kOutputsManifestName);
  if (reserved)
    throw IoError("cannot write " + link_or_file.string() +
                  (path == link_or_file ? "" : " (a link to " + path.string() + ")") + ": " +
                  name + " is a name nodeflow keeps for its own bookkeeping in a directory");
}

void check_replaceable(const std::filesystem::path& link_or_file, bool marker) {
  // stat() of the path as given also resolves the kernel's own links, which
  // final_target refuses: /dev/stdout -> /proc/self/fd/1 -> "pipe:[1234]".
  struct stat st {};
  if (::stat(link_or_file.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    std::filesystem::path path = link_or_file;
    bool has_name = false;  // a FIFO has a name; a pipe reached through /proc has none
    try {
      path = final_target(link_or_file);
      struct stat named {};
      has_name = ::lstat(path.c_str(), &named) == 0;
    } catch (const IoError&) {
    }
    const char* what = S_ISDIR(st.st_mode)                          ? "a directory"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                       : S_ISFIFO(st.st_mode) ? (has_name ? "a FIFO" : "a pipe")
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    throw IoError("cannot write " + link_or_file.string() +
                  (path == link_or_file || !has_name ? "" : " (a link to " + path.string() + ")") +
                  ": it is " + what +
                  ", and saving replaces a regular file whole (a new file renamed over it)");
  }
  refuse_bookkeeping_name(link_or_file, final_target(link_or_file), marker);
}

}  // namespace

void check_replaceable(const std::filesystem::path& link_or_file) {
  check_replaceable(link_or_file, false);
}

void write_file_atomically(const std::filesystem::path& link_or_file, std::string_view bytes,
                           const WriteProgress& progress) {
  check_replaceable(link_or_file);
  const std::filesystem::path path = final_target(link_or_file);
  const std::string what = link_or_file.string();
  const std::string name = path.filename().string();
  const TargetDirectory dir(directory_of(path), what);
  dir.check_name(name, what);
  Stage stage(dir, what);
  const std::string staged = stage.write(bytes, name, true, progress, what);
  install(dir, stage, {{staged, name, what}}, false);
}

struct AtomicFileGroup::Impl {
  std::filesystem::path directory;
  std::optional<TargetDirectory> dir;
  std::optional<Stage> stage;  ///< after dir: destroyed (removed) before it is closed
  std::vector<StagedFile> files;
  std::optional<StagedFile> marker;
  std::set<std::string> targets;

  void stage_file(const std::filesystem::path& link_or_file, std::string_view bytes,
                  bool is_marker) {
    check_replaceable(link_or_file, is_marker);
    const std::filesystem::path path = final_target(link_or_file);
    const std::string what = link_or_file.string();
    const std::filesystem::path parent = directory_of(path);
    if (!dir) {
      dir.emplace(directory, what);
      stage.emplace(*dir, what);
    }
    if (!dir->holds(parent)) {
      throw IoError("cannot write " + what +
                    (path == link_or_file ? "" : " (a link to " + path.string() + ")") +
                    ": it is not in " + dir->path().string() +
                    ", and a set of files is replaced together in one directory");
    }
    const std::string name = path.filename().string();
    dir->check_name(name, what);
    if (is_marker && marker)
      throw IoError("cannot write " + what + ": the set has a marker already");
    if (!targets.insert(name).second)
      throw IoError("cannot write " + what + ": " + dir->shown(name) +
                    " is in the set already (twice, or through a link)");
    StagedFile file{stage->write(bytes, name, false, {}, what), name, what};
    if (is_marker)
      marker = std::move(file);
    else
      files.push_back(std::move(file));
  }
};

AtomicFileGroup::AtomicFileGroup(const std::filesystem::path& directory)
    : impl_(std::make_unique<Impl>()) {
  impl_->directory = directory.empty() ? std::filesystem::path(".") : directory;
}
AtomicFileGroup::~AtomicFileGroup() = default;

void AtomicFileGroup::add(const std::filesystem::path& path, std::string_view bytes) {
  impl_->stage_file(path, bytes, false);
}

void AtomicFileGroup::set_marker(const std::filesystem::path& path, std::string_view bytes) {
  impl_->stage_file(path, bytes, true);
}

void AtomicFileGroup::commit() {
  Impl& impl = *impl_;
  if (!impl.stage) return;  // nothing added
  std::vector<StagedFile> files = std::move(impl.files);
  impl.files.clear();
  if (impl.marker) files.push_back(std::move(*impl.marker));
  impl.stage->flush_all(files.front().what);
  install(*impl.dir, *impl.stage, files, impl.marker.has_value());
  impl.marker.reset();
  impl.targets.clear();
}

}  // namespace nodeflow
