#pragma once
// A scratch folder of the test process's own under the system's temporary one.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace nodeflow::testing {

/// `nodeflow-<name>-<pid>` under std::filesystem::temp_directory_path(),
/// emptied (whatever an earlier run left there is removed) and created. The
/// caller removes it when done.
inline std::filesystem::path temp_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nodeflow-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace nodeflow::testing
