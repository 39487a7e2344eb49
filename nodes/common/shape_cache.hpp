#pragma once
// A node's memo of what it resolves from its input shapes (the window
// geometry of pooling and Conv), so that is done once per shape instead of
// at every infer, forward and backward call.
//
// Nodes are immutable and one graph may run on several threads at once
// (core/node.hpp): a value, once made, is never changed and is handed out as
// a shared_ptr, so an entry dropped from the cache stays valid for whoever
// holds it; a mutex guards the list only while it is searched or extended,
// never while a value is made.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace nodeflow {

template <typename Key, typename Value>
class ShapeCache {
 public:
  /// The value for `key`: the cached one, or `make()`'s (kept for the next
  /// call). What make() throws passes through and nothing is kept, so an
  /// invalid shape is refused again at every call with the same message.
  template <typename Make>
  std::shared_ptr<const Value> get(const Key& key, Make&& make) const {
    if (std::shared_ptr<const Value> hit = find(key)) return hit;
    std::shared_ptr<const Value> made = std::make_shared<const Value>(make());
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_)
      if (e.key == key) return e.value;  // another thread made it meanwhile
    // A few shapes per node in practice (a last, smaller batch; two image
    // sizes): past that, the oldest goes.
    if (entries_.size() == kCapacity) entries_.erase(entries_.begin());
    entries_.push_back({key, made});
    return made;
  }

 private:
  static constexpr std::size_t kCapacity = 8;

  struct Entry {
    Key key;
    std::shared_ptr<const Value> value;
  };

  std::shared_ptr<const Value> find(const Key& key) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_)
      if (e.key == key) return e.value;
    return nullptr;
  }

  mutable std::mutex mutex_;
  mutable std::vector<Entry> entries_;
};

}  // namespace nodeflow
