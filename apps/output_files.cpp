#include "apps/output_files.hpp"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"
#include "serialization/json_text.hpp"
#include "serialization/npy.hpp"

namespace nodeflow::cli {
namespace {

bool keeps_character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// A file may be claimed once; the second claimant is reported with the first.
void claim(std::map<std::string, std::string>& owners, const std::string& file,
           const std::string& what) {
  const auto [it, inserted] = owners.emplace(file, what);
  if (!inserted)
    throw Error(what + " and " + it->second + " would both be written to '" + file +
                "' (characters outside [A-Za-z0-9._-] become '_'); nothing was written");
}

// Refuses, before any file is written, a destination that cannot be: a
// directory (or device, FIFO, socket) in its place or, after links, a
// directory this process cannot write into (clearer than the failure of its
// staged file). Each directory is asked once: a set may have 20,000 files.
void check_destinations(const std::vector<std::filesystem::path>& files) {
  std::set<std::filesystem::path> writable;
  for (const auto& file : files) {
    try {
      check_replaceable(file);
    } catch (const IoError& e) {
      throw IoError(std::string(e.what()) + "; nothing was written");
    }
    std::filesystem::path dir = final_target(file).parent_path();
    if (dir.empty()) dir = ".";
    if (writable.count(dir)) continue;
    if (::access(dir.c_str(), W_OK) != 0)
      throw IoError("cannot write '" + file.string() + "': directory '" + dir.string() +
                    "' is not writable; nothing was written");
    writable.insert(dir);
  }
}

struct ManifestEntry {
  std::string name;
  std::size_t bytes;
  std::string sha256;
};

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw Error("SHA-256 of an output file failed (OpenSSL)");
  std::string hex;
  char pair[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(pair, sizeof pair, "%02x", digest[i]);
    hex += pair;
  }
  return hex;
}

std::string manifest_json(std::vector<ManifestEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const ManifestEntry& a, const ManifestEntry& b) { return a.name < b.name; });
  std::string out = "{\"format\": \"nodeflow.outputs\", \"version\": 1, \"files\": [";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    out += "  {\"name\": ";
    // A run's file names are of [A-Za-z0-9._-] (tensor_file_stem); train
    // checks its names before it trains (a JSON string holds only UTF-8).
    if (!json_text::append_string(out, entries[i].name))
      throw IoError("cannot list '" + printable(entries[i].name, std::string::npos) +
                    "' in the manifest " + std::string(kManifestName) + ": not UTF-8");
    out += ", \"bytes\": " + std::to_string(entries[i].bytes) + ", \"sha256\": \"" +
           entries[i].sha256 + "\"}";
  }
  return out + (entries.empty() ? "]}\n" : "\n]}\n");
}

// The file a path finally names, for comparing files: symbolic links
// followed (the last component too, even a dangling one), "." and ".."
// resolved, relative to the current directory.
std::filesystem::path file_identity(const std::filesystem::path& path) {
  const std::filesystem::path absolute = std::filesystem::absolute(final_target(path));
  std::error_code ec;
  const std::filesystem::path id = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : id;
}

/// What same_file compares: where a path leads, and its inode if it exists
/// (hard links and bind mounts: only existing files can tell).
struct FileIdentity {
  std::filesystem::path path;
  std::optional<std::pair<dev_t, ino_t>> inode;

  bool same_as(const FileIdentity& other) const {
    return path == other.path || (inode && other.inode && *inode == *other.inode);
  }
};

std::optional<std::pair<dev_t, ino_t>> inode_of(const struct stat& st) {
  return std::make_pair(st.st_dev, st.st_ino);
}

FileIdentity identify(const std::filesystem::path& path) {
  struct stat st {};
  return {file_identity(path), ::stat(path.c_str(), &st) == 0 ? inode_of(st) : std::nullopt};
}

/// identify() of a file that is only read: /dev/stdin, <(...) and other
/// /proc or /dev/fd paths are fine to read (final_target refuses them only
/// as places to write), so they are resolved without it.
FileIdentity identify_input(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path id = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) id = path.lexically_normal();
  struct stat st {};
  return {id, ::stat(path.c_str(), &st) == 0 ? inode_of(st) : std::nullopt};
}

const Tensor& find_result(const TensorMap& results, const std::string& name, const char* kind) {
  const auto it = results.find(name);
  if (it == results.end())
    throw Error(std::string("the run produced no ") + kind + " for '" + name + "'");
  return it->second;
}

}  // namespace

std::string tensor_file_stem(std::string_view tensor_name) {
  // Per character (docs/graph-format.md), and names are UTF-8: the continuation
  // bytes of a replaced character add nothing ("é" -> "_", not "__").
  std::string stem;
  bool in_character = false;
  for (const char c : tensor_name) {
    const auto byte = static_cast<unsigned char>(c);
    const bool continuation = (byte & 0xC0u) == 0x80u;
    if (continuation && in_character) continue;
    in_character = byte >= 0x80u;
    stem += keeps_character(c) ? c : '_';
  }
  return stem;
}

OutputPlan plan_output_files(const std::filesystem::path& outdir,
                             const std::vector<std::string>& outputs,
                             const std::vector<std::string>& grads) {
  OutputPlan plan{outdir, {}, {}};
  std::map<std::string, std::string> owners;  // file name -> description of its tensor
  for (const auto& name : outputs) {
    // An output listed twice is one tensor (the executor returns it once): one file.
    if (plan.outputs.count(name)) continue;
    const std::string file = tensor_file_stem(name) + ".npy";
    claim(owners, file, "output '" + name + "'");
    plan.outputs.emplace(name, outdir / file);
  }
  for (const auto& name : grads) {
    if (plan.grads.count(name)) continue;
    const std::string file = tensor_file_stem(name) + ".grad.npy";
    claim(owners, file, "the gradient of '" + name + "'");
    plan.grads.emplace(name, outdir / file);
  }
  return plan;
}

void write_planned_files(const OutputPlan& plan, const TensorMap& outputs, const TensorMap& grads) {
  // Look every tensor up first: a missing one must not leave half the files behind.
  std::vector<std::pair<std::filesystem::path, const Tensor*>> files;
  for (const auto& [name, file] : plan.outputs)
    files.emplace_back(file, &find_result(outputs, name, "output"));
  for (const auto& [name, file] : plan.grads)
    files.emplace_back(file, &find_result(grads, name, "gradient"));
  if (!plan.outdir.empty()) {
    // A link to a directory still to be made (dangling) is followed.
    const auto dir = final_target(plan.outdir);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw IoError("cannot create output directory '" + dir.string() + "': " + ec.message());
  }
  std::vector<std::filesystem::path> destinations;
  for (const auto& [file, value] : files) destinations.push_back(file);
  check_destinations(destinations);
  // Every file is complete before the first is renamed into place.
  AtomicFileGroup group(plan.outdir);
  std::vector<ManifestEntry> manifest;
  try {
    for (const auto& [file, value] : files) {
      const std::string bytes = encode_npy(*value);  // bfloat16 as float32
      manifest.push_back({file.filename().string(), bytes.size(), sha256_hex(bytes)});
      group.add(file, bytes);
    }
    group.set_marker(plan.outdir / kManifestName, manifest_json(std::move(manifest)));
  } catch (const IoError& e) {
    throw IoError(std::string(e.what()) + "; nothing was written");
  }
  group.commit();
}

void write_file_set(const std::filesystem::path& directory, const std::vector<SetFile>& files) {
  AtomicFileGroup group(directory);
  std::vector<ManifestEntry> manifest;
  try {
    for (const SetFile& file : files) {
      manifest.push_back({final_target(file.path).filename().string(), file.bytes.size(),
                          sha256_hex(file.bytes)});
      group.add(file.path, file.bytes);
    }
    group.set_marker(directory / kManifestName, manifest_json(std::move(manifest)));
  } catch (const IoError& e) {
    throw IoError(std::string(e.what()) + "; nothing was written");
  }
  group.commit();
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  return identify(a).same_as(identify(b));
}

bool writes_input(const std::filesystem::path& written, const std::filesystem::path& read) {
  return identify(written).same_as(identify_input(read));
}

void refuse_input_files(const OutputPlan& plan, const std::vector<NamedFile>& inputs,
                        std::string_view option) {
  std::vector<FileIdentity> read;
  for (const NamedFile& input : inputs) read.push_back(identify_input(input.file));
  // identify() of every planned file, from one canonical OUTDIR: a file that
  // is not a link is OUTDIR's entry (one lstat instead of a walk per file).
  const std::filesystem::path outdir = file_identity(plan.outdir.empty() ? "." : plan.outdir);
  const auto planned = [&](const std::filesystem::path& file) -> FileIdentity {
    struct stat st {};
    if (::lstat(file.c_str(), &st) != 0) return {outdir / file.filename(), std::nullopt};
    if (S_ISLNK(st.st_mode)) return identify(file);
    return {outdir / file.filename(), inode_of(st)};
  };
  const auto refuse_input = [&](const std::string& described, const std::filesystem::path& file) {
    const FileIdentity written = planned(file);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!written.same_as(read[i])) continue;
      const NamedFile& input = inputs[i];
      throw UsageError(described + " would be written to " + file.string() + ", which is " +
                       (file == input.file ? "" : "the same file as ") + std::string(option) +
                       " " + (input.name.empty() ? "" : input.name + "=") + input.file.string() +
                       ", a file this command reads; each output needs a file of its own "
                       "(choose another -o)");
    }
  };
  for (const auto& [name, file] : plan.outputs) refuse_input("output '" + name + "'", file);
  for (const auto& [name, file] : plan.grads) refuse_input("the gradient of '" + name + "'", file);
}

}  // namespace nodeflow::cli
