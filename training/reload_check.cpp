#include "training/reload_check.hpp"

#include <cstring>

#include "serialization/json_reader.hpp"

namespace nodeflow::training {

ReloadCheck check_reload(const Graph& trained, const std::filesystem::path& saved,
                         const Dataset& data, const Bindings& bindings, std::int64_t batch_size,
                         const ExecutorOptions& options, const ReadOptions& read) {
  return check_reload(trained, load_graph_file(saved, read), data, bindings, batch_size, options);
}

ReloadCheck check_reload(const Graph& trained, const Graph& loaded, const Dataset& data,
                         const Bindings& bindings, std::int64_t batch_size,
                         const ExecutorOptions& options) {
  ReloadCheck check{evaluate(trained, data, bindings, batch_size, options),
                    evaluate(loaded, data, bindings, batch_size, options), std::nullopt};
  const Tensor& a = check.in_memory.predictions;
  const Tensor& b = check.reloaded.predictions;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    check.first_difference = 0;
    return check;
  }
  const std::size_t row = data.size() == 0 ? 0 : a.nbytes() / data.size();
  for (std::size_t i = 0; i < data.size(); ++i)
    if (std::memcmp(a.raw() + i * row, b.raw() + i * row, row) != 0) {
      check.first_difference = i;
      break;
    }
  return check;
}

}  // namespace nodeflow::training
