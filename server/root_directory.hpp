#pragma once
// The files the server may read and write: graph documents (.json) and ONNX
// models (.onnx) under the --root directory (docs/server.md, "Files"). Every
// path a request names is relative to the root and stays inside it: no
// absolute paths, no "..", no hidden names, and no symbolic link that leads
// out of it.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "serialization/graph_file.hpp"

namespace nodeflow::server {

/// A graph file under the root: its path relative to the root ("a/b.json",
/// '/' between folders), its size in bytes and format.
struct RootFile {
  std::string path;
  std::uintmax_t size = 0;
  GraphFormat format = GraphFormat::Json;
};

/// A request's path was refused; status is the HTTP status it gets (400 for a
/// malformed path, 403 for one leading out of the root, 404 for a missing file).
class PathRefused : public std::runtime_error {
 public:
  PathRefused(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

class RootDirectory {
 public:
  /// Throws nodeflow::IoError when `root` is not an existing directory.
  explicit RootDirectory(const std::filesystem::path& root);

  /// The canonical root.
  const std::filesystem::path& path() const { return root_; }

  /// The existing graph file `relative` names, as a canonical path inside the
  /// root. Throws PathRefused: 400 when `relative` is empty, absolute, has an
  /// empty, ".", ".." or hidden (".x") component, a control character or a
  /// backslash, or ends in neither .json nor .onnx; 403 when it leads out of
  /// the root through a symbolic link; 404 when it is not a regular file.
  std::filesystem::path existing(std::string_view name) const;

  /// Where saving `relative` writes: its folders (missing ones created, inside
  /// the root) resolved, the file itself as named (a link there is followed by
  /// the atomic save only when it leads to a file inside the root). Throws
  /// PathRefused as existing() does (403 for a link or folder leading out),
  /// and nodeflow::IoError when a folder cannot be created.
  std::filesystem::path for_saving(std::string_view name) const;

  /// Every .json and .onnx file under the root, by path; hidden entries and
  /// links leading out are left out. At most `limit` files and `max_depth`
  /// folders deep.
  std::vector<RootFile> list(std::size_t limit = 10000, int max_depth = 16) const;

  /// `path` (inside the root) relative to it, '/' between components.
  std::string relative(const std::filesystem::path& path) const;

 private:
  std::filesystem::path checked_relative(std::string_view name) const;
  bool inside(const std::filesystem::path& canonical) const;

  std::filesystem::path root_;
};

}  // namespace nodeflow::server
