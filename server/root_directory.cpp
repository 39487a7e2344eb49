#include "server/root_directory.hpp"

#include <algorithm>
#include <system_error>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"

namespace nodeflow::server {
namespace {

namespace fs = std::filesystem;

bool graph_extension(const fs::path& p) { return p.extension() == ".json" || p.extension() == ".onnx"; }

}  // namespace

RootDirectory::RootDirectory(const fs::path& root) {
  std::error_code ec;
  root_ = fs::canonical(root, ec);
  if (ec || !fs::is_directory(root_, ec))
    throw IoError("--root " + root.string() + ": not an existing directory" +
                  (ec ? " (" + ec.message() + ")" : std::string()));
}

fs::path RootDirectory::checked_relative(std::string_view name) const {
  const auto refuse = [&](const std::string& why) -> PathRefused {
    return PathRefused(400, "path '" + printable(name, 200) + "': " + why);
  };
  if (name.empty()) throw refuse("empty");
  if (name.size() > 1024) throw refuse("longer than 1024 bytes");
  if (name.front() == '/') throw refuse("must be relative to the root");
  for (const char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\')
      throw refuse("control characters and backslashes are refused");
  fs::path out;
  std::size_t at = 0;
  while (at <= name.size()) {
    const std::size_t end = std::min(name.find('/', at), name.size());
    const std::string_view part = name.substr(at, end - at);
    if (part.empty() || part == "." || part == "..")
      throw refuse("empty, '.' and '..' components are refused");
    if (part.front() == '.') throw refuse("hidden names (starting with '.') are refused");
    out /= fs::path(std::string(part));
    at = end + 1;
  }
  if (!graph_extension(out)) throw refuse("only .json and .onnx files are served");
  return out;
}

bool RootDirectory::inside(const fs::path& canonical) const {
  const auto [r, c] = std::mismatch(root_.begin(), root_.end(), canonical.begin(), canonical.end());
  return r == root_.end();
}

fs::path RootDirectory::existing(std::string_view name) const {
  const fs::path rel = checked_relative(name);
  std::error_code ec;
  const fs::path full = fs::canonical(root_ / rel, ec);
  if (ec) throw PathRefused(404, "no file '" + printable(name, 200) + "' under the root");
  if (!inside(full))
    throw PathRefused(403, "path '" + printable(name, 200) + "' leads out of the root");
  if (!fs::is_regular_file(full, ec))
    throw PathRefused(404, "'" + printable(name, 200) + "' is not a file");
  return full;
}

fs::path RootDirectory::for_saving(std::string_view name) const {
  const fs::path rel = checked_relative(name);
  // The nearest existing folder must be inside the root after links; the
  // folders still missing are then made inside it.
  fs::path folder = root_;
  std::error_code ec;
  for (const fs::path& part : rel.parent_path()) {
    folder /= part;
    if (fs::exists(fs::symlink_status(folder, ec))) {
      const fs::path resolved = fs::canonical(folder, ec);
      if (ec || !inside(resolved) || !fs::is_directory(resolved, ec))
        throw PathRefused(403, "path '" + printable(name, 200) +
                                   "': a folder on the way leads out of the root or is not a folder");
      folder = resolved;
    } else {
      fs::create_directory(folder, ec);
      if (ec)
        throw IoError("cannot create the folder " + folder.string() + ": " + ec.message());
    }
  }
  const fs::path target = folder / rel.filename();
  // A link at the file's name is followed by the save: only to a file inside.
  const fs::path final_file = final_target(target);
  const fs::path final_folder = fs::canonical(final_file.parent_path(), ec);
  if (ec || !inside(final_folder / final_file.filename()))
    throw PathRefused(403, "path '" + printable(name, 200) + "' leads out of the root");
  return target;
}

std::string RootDirectory::relative(const fs::path& path) const {
  return path.lexically_relative(root_).generic_string();
}

std::vector<RootFile> RootDirectory::list(std::size_t limit, int max_depth) const {
  std::vector<RootFile> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root_, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename().string().front() == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec)) {
      // Folder links are not followed (the iterator's default); nor is a depth past max_depth.
      if (it.depth() + 1 >= max_depth) it.disable_recursion_pending();
      continue;
    }
    if (!graph_extension(p) || !it->is_regular_file(ec)) continue;
    if (it->is_symlink(ec)) {
      const fs::path resolved = fs::canonical(p, ec);
      if (ec || !inside(resolved)) continue;
    }
    const std::uintmax_t size = it->file_size(ec);
    if (ec) continue;
    files.push_back({relative(p), size, graph_format_of(p)});
    if (files.size() >= limit) break;
  }
  std::sort(files.begin(), files.end(), [](const RootFile& a, const RootFile& b) { return a.path < b.path; });
  return files;
}

}  // namespace nodeflow::server
