#include "training/datasets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"
#include "serialization/idx.hpp"
#include "serialization/npy.hpp"

namespace nodeflow::training {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kIdxClasses = 10;  // MNIST's digits, Fashion-MNIST's garments

const char* const kRoles[] = {"training samples", "training labels", "test samples",
                              "test labels"};
const char* const kIdxNames[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
const char* const kNpyNames[] = {"train_samples.npy", "train_labels.npy", "test_samples.npy",
                                 "test_labels.npy"};

std::string shown(const fs::path& path) { return printable(path.string(), std::string::npos); }

bool regular_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

// How to get the data, for a message about missing files.
std::string remedy(const DatasetSource& s) {
  switch (s.kind) {
    case DatasetKind::Mnist:
      return std::string("scripts/fetch_mnist.sh, run in the nodeflow source tree, fetches them "
                         "into its ") +
             kMnistFetchedDir + "; --data mnist:DIR or " + kMnistDirVariable +
             "=DIR point at a folder that holds them";
    case DatasetKind::FashionMnist:
      return std::string("Debian's package dataset-fashion-mnist installs them in ") +
             kFashionMnistDir + " (apt-get install dataset-fashion-mnist); --data "
             "fashion-mnist:DIR points at another folder that holds them";
    case DatasetKind::Npy:
      break;
  }
  return "npy:DIR needs train_samples.npy, train_labels.npy, test_samples.npy and "
         "test_labels.npy in DIR (docs/training-config.md, \"Datasets\")";
}

void check_present(const DatasetSource& s, const std::vector<DatasetFile>& files) {
  // A name that exists but is no regular file (a folder, a FIFO, a device) is
  // not "missing": it is there and cannot be read as data.
  std::vector<std::string> missing, irregular;
  for (const DatasetFile& f : files) {
    if (regular_file(f.path)) continue;
    std::error_code ec;
    if (fs::exists(f.path, ec))
      irregular.push_back(f.path.filename().string());
    else
      missing.push_back(f.candidates.size() == 1
                            ? f.candidates[0].filename().string()
                            : f.candidates[0].filename().string() + " (or .gz)");
  }
  if (missing.empty() && irregular.empty()) return;
  const std::string where = shown(s.dir) + " (" + s.origin + ")";
  std::error_code ec;
  std::string what;
  if (!fs::exists(s.dir, ec)) {
    what = "the folder " + where + " does not exist";
  } else if (!fs::is_directory(s.dir, ec)) {
    what = where + " is not a folder";
  } else {
    if (!missing.empty())
      what = joined(missing) + (missing.size() == 1 ? " is" : " are") + " missing from " + where;
    if (!irregular.empty())
      what += (what.empty() ? "" : "; ") + joined(irregular) +
              (irregular.size() == 1 ? " is not a regular file" : " are not regular files") +
              " (a folder, FIFO or device) in " + where;
  }
  throw IoError(s.name + " dataset: " + what + ". " + remedy(s));
}

Tensor read_file(const DatasetSource& s, const DatasetFile& f) {
  return s.kind == DatasetKind::Npy ? read_npy(f.path) : read_idx(f.path);
}

[[noreturn]] void refuse(const DatasetFile& f, const std::string& what) {
  throw IoError(shown(f.path) + " (" + f.role + "): " + what);
}

std::string described(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + " " + to_string(t.shape());
}

// uint8 pixels -> float32 in [0, 1], with a channel axis after the count when
// `add_channel` (IDX images are [N, H, W]; the graphs take NCHW).
Tensor scaled_pixels(const Tensor& bytes, bool add_channel) {
  Shape shape = bytes.shape();
  if (add_channel) shape.insert(shape.begin() + 1, 1);
  Tensor out = Tensor::uninitialized(DType::Float32, shape);
  const std::uint8_t* in = bytes.data<std::uint8_t>();
  float* px = out.data<float>();
  for (std::int64_t i = 0; i < bytes.numel(); ++i) px[i] = static_cast<float>(in[i]) / 255.0f;
  return out;
}

// Labels as int64, each checked to be >= 0 and, when `classes` is given, below it.
std::vector<std::int64_t> labels_of(const DatasetFile& f, const Tensor& t,
                                    std::optional<std::int64_t> classes) {
  if (t.rank() != 1) refuse(f, "labels must be of rank 1 ([N]), not " + described(t));
  std::vector<std::int64_t> labels(static_cast<std::size_t>(t.numel()));
  switch (t.dtype()) {
    case DType::UInt8:
      std::copy_n(t.data<std::uint8_t>(), labels.size(), labels.begin());
      break;
    case DType::Int8:
      std::copy_n(t.data<std::int8_t>(), labels.size(), labels.begin());
      break;
    case DType::Int64:
      std::copy_n(t.data<std::int64_t>(), labels.size(), labels.begin());
      break;
    default:
      refuse(f, "labels must be int64, uint8 or int8, not " + described(t));
  }
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || (classes && labels[i] >= *classes))
      refuse(f, "label " + std::to_string(i) + " is " + std::to_string(labels[i]) +
                    ", outside [0, " + (classes ? std::to_string(*classes) : "inf") + ")");
  return labels;
}

void check_counts(const DatasetFile& samples, const Tensor& s, const DatasetFile& labels,
                  const std::vector<std::int64_t>& l) {
  if (s.shape()[0] != static_cast<std::int64_t>(l.size()))
    refuse(labels, std::to_string(l.size()) + " labels for the " + std::to_string(s.shape()[0]) +
                       " samples of " + shown(samples.path));
  // An empty split would train on nothing, or report an accuracy of 0% over
  // no test samples and a reload check that compared nothing.
  if (l.empty())
    refuse(samples, "holds no samples (" + described(s) +
                        "); every split needs at least one sample");
}

// Float samples must be finite: a NaN or infinity would reach the loss and
// stop training as "diverged" far from its cause.
void check_finite(const DatasetFile& f, const Tensor& samples) {
  const std::int64_t n = samples.shape()[0];
  const std::int64_t per = n == 0 ? 0 : samples.numel() / n;
  visit_float_dtype(samples.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* values = samples.data<T>();
    for (std::int64_t i = 0; i < samples.numel(); ++i) {
      const double x = static_cast<double>(static_cast<accumulator_t<T>>(values[i]));
      if (!std::isfinite(x))
        refuse(f, "sample " + std::to_string(i / per) + " holds " +
                      (std::isnan(x) ? "NaN" : x > 0 ? "inf" : "-inf") + " (its element " +
                      std::to_string(i % per) + "); samples must be finite");
    }
  });
}

Dataset idx_split(const DatasetSource& s, const DatasetFile& images_file,
                  const DatasetFile& labels_file) {
  const Tensor images = read_file(s, images_file);
  if (images.dtype() != DType::UInt8 || images.rank() != 3)
    refuse(images_file, "images must be uint8 [N, height, width], not " + described(images));
  const Tensor labels = read_file(s, labels_file);
  if (labels.dtype() != DType::UInt8)
    refuse(labels_file, "labels must be uint8 [N], not " + described(labels));
  std::vector<std::int64_t> l = labels_of(labels_file, labels, kIdxClasses);
  check_counts(images_file, images, labels_file, l);
  return {scaled_pixels(images, true), std::move(l), kIdxClasses};
}

Dataset npy_split(const DatasetFile& samples_file, const DatasetFile& labels_file) {
  Tensor samples = read_npy(samples_file.path);
  if (samples.rank() < 2)
    refuse(samples_file, "samples must be of rank 2 or more ([N, ...]), not " + described(samples));
  if (samples.dtype() == DType::UInt8)
    samples = scaled_pixels(samples, false);
  else if (!is_float(samples.dtype()))
    refuse(samples_file,
           "samples must be float32, float64, float16 or uint8, not " + described(samples));
  else
    check_finite(samples_file, samples);
  std::vector<std::int64_t> l = labels_of(labels_file, read_npy(labels_file.path), std::nullopt);
  check_counts(samples_file, samples, labels_file, l);
  return {std::move(samples), std::move(l), 0};
}

}  // namespace

std::vector<DatasetFile> DatasetSource::files() const {
  std::vector<DatasetFile> out;
  for (std::size_t k = 0; k < 4; ++k) {
    DatasetFile f{kRoles[k], {}, {}};
    if (kind == DatasetKind::Npy) {
      f.candidates = {dir / kNpyNames[k]};
    } else {
      const fs::path plain = dir / kIdxNames[k];
      f.candidates = {plain, fs::path(plain) += ".gz"};
    }
    f.path = f.candidates.front();
    for (const fs::path& c : f.candidates)
      if (regular_file(c)) {
        f.path = c;
        break;
      }
    out.push_back(std::move(f));
  }
  return out;
}

DatasetSource parse_dataset_source(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  const std::string name(spec.substr(0, colon));
  const std::optional<std::string> dir =
      colon == std::string_view::npos ? std::nullopt
                                      : std::optional<std::string>(spec.substr(colon + 1));
  const std::string forms = " (expected mnist, mnist:DIR, fashion-mnist, fashion-mnist:DIR or "
                            "npy:DIR)";
  if (dir && dir->empty())
    throw InvalidAttribute("--data '" + printable(spec, 200) + "': the folder after ':' is empty" +
                           forms);
  DatasetSource s;
  s.name = name;
  if (name == "mnist") {
    s.kind = DatasetKind::Mnist;
    if (dir) {
      s.dir = *dir, s.origin = "--data";
    } else if (const char* env = std::getenv(kMnistDirVariable); env != nullptr && *env != '\0') {
      s.dir = env, s.origin = std::string("$") + kMnistDirVariable;
    } else {
      std::error_code ec;
      s.dir = kMnistFetchedDir;
      s.origin = "the default, in the current directory " + fs::current_path(ec).string();
    }
  } else if (name == "fashion-mnist") {
    s.kind = DatasetKind::FashionMnist;
    s.dir = dir.value_or(kFashionMnistDir);
    s.origin = dir ? "--data" : "the default";
  } else if (name == "npy") {
    if (!dir)
      throw InvalidAttribute("--data npy needs a folder: npy:DIR" + forms);
    s.kind = DatasetKind::Npy;
    s.dir = *dir;
    s.origin = "--data";
  } else {
    throw InvalidAttribute("--data: unknown dataset '" + printable(name, 200) + "'" + forms);
  }
  return s;
}

TrainTestData load_dataset(const DatasetSource& source) {
  const std::vector<DatasetFile> files = source.files();
  check_present(source, files);
  if (source.kind != DatasetKind::Npy)
    return {idx_split(source, files[0], files[1]), idx_split(source, files[2], files[3])};
  TrainTestData d{npy_split(files[0], files[1]), npy_split(files[2], files[3])};
  const auto sample_shape = [](const Tensor& t) { return Shape(t.shape().begin() + 1, t.shape().end()); };
  if (d.train.samples.dtype() != d.test.samples.dtype() ||
      sample_shape(d.train.samples) != sample_shape(d.test.samples))
    refuse(files[2], "samples " + described(d.test.samples) + " do not match the training samples " +
                         described(d.train.samples) + " of " + shown(files[0].path) +
                         " (the same dtype and shape after N)");
  std::int64_t largest = -1;
  for (const Dataset* part : {&d.train, &d.test})
    for (std::int64_t l : part->labels) largest = std::max(largest, l);
  d.train.num_classes = d.test.num_classes = largest + 1;
  return d;
}

Split split_validation(const Dataset& train, std::size_t count) {
  if (count == 0 || count >= train.size())
    throw InvalidAttribute("validation: " + std::to_string(count) +
                           " samples cannot be held out of a training set of " +
                           std::to_string(train.size()) + " (1 to " +
                           std::to_string(train.size() > 0 ? train.size() - 1 : 0) + ")");
  return split(train, train.size() - count, kValidationSplitSeed);
}

}  // namespace nodeflow::training
