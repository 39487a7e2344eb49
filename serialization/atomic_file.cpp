#include "serialization/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

std::string system_reason() { return std::strerror(errno); }

/// An exclusively created temporary file, removed unless released.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::filesystem::path& target) : target_(target.string()) {
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
    // A name the final rename would refuse is refused now, before anything
    // of a group of files is replaced.
    const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
    const std::size_t limit = name_max > 0 ? static_cast<std::size_t>(name_max) : 255;
    if (target.filename().string().size() > limit)
      throw IoError("cannot write " + target_ + ": the file name is " +
                    std::to_string(target.filename().string().size()) +
                    " bytes long, more than the file system allows (" + std::to_string(limit) + ")");
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      // Appended piece by piece: GCC 12's -Wrestrict misfires on "." + std::string.
      // At most the file name's first 200 bytes: with the suffix, the whole
      // name must stay within NAME_MAX (255) for every target that fits it.
      std::string name(".");
      name += target.filename().string().substr(0, 200);
      name += ".tmp-";
      name += std::to_string(::getpid());
      name += '-';
      name += std::to_string(counter.fetch_add(1));
      path_ = dir / name;
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) break;
    }
    if (fd_ < 0)
      throw IoError("cannot write " + target_ + ": create temporary file: " + system_reason());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
  }

  [[noreturn]] void fail(const std::string& step) const {
    throw IoError("cannot write " + target_ + ": " + step + ": " + system_reason());
  }

  void write(std::string_view bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
      const ::ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("write");
      done += static_cast<std::size_t>(n);
    }
  }

  /// Gives the file the mode of the file it replaces, so that saving over a
  /// private (0600) file keeps it private.
  void copy_mode_of(const std::filesystem::path& existing) {
    struct stat st {};
    if (::stat(existing.c_str(), &st) == 0 && ::fchmod(fd_, st.st_mode & 07777) != 0) fail("chmod");
  }

  /// Makes the file durable and closes it; rename() then puts it in place.
  void finish() {
    if (::fsync(fd_) != 0) fail("fsync");
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) fail("close");
  }

  void rename(const std::filesystem::path& target) {
    if (::rename(path_.c_str(), target.c_str()) != 0) fail("rename");
    renamed_ = true;
  }

 private:
  std::string target_;
  std::filesystem::path path_;
  int fd_ = -1;
  bool renamed_ = false;
};

/// Symbolic links cross before the final component is never more than this
/// (Linux's own limit, ELOOP).
constexpr int kMaxSymlinkHops = 40;

}  // namespace

// Renaming onto a link itself would turn it into a regular file and leave its
// target untouched.
std::filesystem::path final_target(const std::filesystem::path& path) {
  std::filesystem::path target = path;
  for (int hop = 0; hop <= kMaxSymlinkHops; ++hop) {
    std::error_code ec;
    if (!std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec))) return target;
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

/// Makes the rename itself durable. Best effort: the new file is already
/// complete and in place, so a failure here is not reported.
void sync_directory(const std::filesystem::path& target) {
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void check_replaceable(const std::filesystem::path& link_or_file) {
  const std::filesystem::path path = final_target(link_or_file);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;  // absent: created
  const char* what = S_ISDIR(st.st_mode)                             ? "a directory"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                     : S_ISFIFO(st.st_mode)                        ? "a FIFO"
                     : S_ISSOCK(st.st_mode)                        ? "a socket"
                                                                   : "not a regular file";
  throw IoError("cannot write " + link_or_file.string() +
                (path == link_or_file ? "" : " (a link to " + path.string() + ")") + ": it is " +
                what + ", and saving replaces a regular file whole (a new file renamed over it)");
}

namespace {

void write_temporary(TemporaryFile& tmp, const std::filesystem::path& path, std::string_view bytes,
                     const WriteProgress& progress) {
  tmp.copy_mode_of(path);
  std::size_t done = 0;
  do {
    const std::size_t n = std::min(kWriteBlockSize, bytes.size() - done);
    tmp.write(bytes.substr(done, n));
    done += n;
    if (progress) progress(done);
  } while (done < bytes.size());
  tmp.finish();
}

}  // namespace

void write_file_atomically(const std::filesystem::path& link_or_file, std::string_view bytes,
                           const WriteProgress& progress) {
  check_replaceable(link_or_file);
  const std::filesystem::path path = final_target(link_or_file);
  TemporaryFile tmp(path);
  write_temporary(tmp, path, bytes, progress);
  tmp.rename(path);
  sync_directory(path);
}

struct AtomicFileGroup::Impl {
  std::vector<std::pair<std::filesystem::path, std::unique_ptr<TemporaryFile>>> files;
};

AtomicFileGroup::AtomicFileGroup() : impl_(std::make_unique<Impl>()) {}
AtomicFileGroup::~AtomicFileGroup() = default;

void AtomicFileGroup::add(const std::filesystem::path& link_or_file, std::string_view bytes) {
  check_replaceable(link_or_file);
  const std::filesystem::path path = final_target(link_or_file);
  auto tmp = std::make_unique<TemporaryFile>(path);
  write_temporary(*tmp, path, bytes, {});
  impl_->files.emplace_back(path, std::move(tmp));
}

void AtomicFileGroup::commit() {
  for (auto& [path, tmp] : impl_->files) tmp->rename(path);
  for (auto& [path, tmp] : impl_->files) sync_directory(path);
  impl_->files.clear();
}

}  // namespace nodeflow
