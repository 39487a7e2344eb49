#include "apps/output_files.hpp"

#include <unistd.h>

#include <system_error>
#include <utility>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"
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
// temporary file).
void check_destination(const std::filesystem::path& file) {
  try {
    check_replaceable(file);
  } catch (const IoError& e) {
    throw IoError(std::string(e.what()) + "; nothing was written");
  }
  std::error_code ec;
  std::filesystem::path target = std::filesystem::weakly_canonical(file, ec);
  if (ec) target = file;
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  if (::access(dir.c_str(), W_OK) != 0)
    throw IoError("cannot write '" + file.string() + "': directory '" + dir.string() +
                  "' is not writable; nothing was written");
}

const Tensor& find_result(const TensorMap& results, const std::string& name, const char* kind) {
  const auto it = results.find(name);
  if (it == results.end())
    throw Error(std::string("the run produced no ") + kind + " for '" + name + "'");
  return it->second;
}

}  // namespace

std::string tensor_file_stem(std::string_view tensor_name) {
  // Per character (graph-format.md), and names are UTF-8: the continuation
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
  for (const auto& [file, value] : files) check_destination(file);
  // Every file is complete before the first is renamed into place.
  AtomicFileGroup group;
  for (const auto& [file, value] : files) {
    try {
      group.add(file, encode_npy(*value));  // bfloat16 as float32
    } catch (const IoError& e) {
      throw IoError(std::string(e.what()) + "; nothing was written");
    }
  }
  group.commit();
}

}  // namespace nodeflow::cli
