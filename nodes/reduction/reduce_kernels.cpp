#include "nodes/reduction/reduce_kernels.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/accumulate.hpp"
#include "core/errors.hpp"
#include "nodes/common/stream_lines.hpp"
#include "nodes/reduction/reduce_lines.hpp"

namespace nodeflow {
namespace {

template <typename A> using Array = Eigen::Array<A, Eigen::Dynamic, 1>;
template <typename A> using ConstMap = Eigen::Map<const Array<A>>;
template <typename A> using MutMap = Eigen::Map<Array<A>>;

// Max and Min propagate NaN, as numpy's and PyTorch's do.
template <typename A>
constexpr int kNaNRule = std::is_floating_point_v<A> ? Eigen::PropagateNaN : Eigen::PropagateFast;

template <typename A> bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return std::isnan(v);
  else
    return false;
}

// ---- Reduction policies: map(x, s) is the element mapped (s: a per-output
// value, where the policy has one), combine joins partial results element by
// element, fold reduces a mapped line to one value, join joins two values.

struct Plus {
  template <typename L, typename R> static auto combine(const L& a, const R& b) { return a + b; }
  template <typename X> static auto fold(const X& x) { return x.sum(); }
  template <typename A> static A join(A a, A b) { return a + b; }
};

struct Times {
  template <typename L, typename R> static auto combine(const L& a, const R& b) { return a * b; }
  template <typename X> static auto fold(const X& x) { return x.prod(); }
  template <typename A> static A join(A a, A b) { return a * b; }
};

struct Sum : Plus {
  template <typename X, typename S> static auto map(const X& x, const S&) { return x; }
};

struct Square : Plus {
  template <typename X, typename S> static auto map(const X& x, const S&) { return x.square(); }
};

struct Product : Times {
  template <typename X, typename S> static auto map(const X& x, const S&) { return x; }
};

template <bool Larger> struct Extreme {
  template <typename X, typename S> static auto map(const X& x, const S&) { return x; }
  template <typename L, typename R> static auto combine(const L& a, const R& b) {
    using A = typename L::Scalar;
    if constexpr (Larger)
      return a.binaryExpr(b, Eigen::internal::scalar_max_op<A, A, kNaNRule<A>>());
    else
      return a.binaryExpr(b, Eigen::internal::scalar_min_op<A, A, kNaNRule<A>>());
  }
  template <typename X> static auto fold(const X& x) {
    using A = typename X::Scalar;
    if constexpr (Larger)
      return x.template maxCoeff<kNaNRule<A>>();
    else
      return x.template minCoeff<kNaNRule<A>>();
  }
  template <typename A> static A join(A a, A b) {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return (Larger ? a < b : b < a) ? b : a;
  }
};
using Max = Extreme<true>;
using Min = Extreme<false>;

// sum(exp(x - s)), s the slice's maximum (LogSumExp without overflow).
struct ExpShifted : Plus {
  template <typename X, typename S> static auto map(const X& x, const S& s) { return (x - s).exp(); }
};

// How many elements equal s (the tied extremes of ReduceMax/Min).
struct CountEqual : Plus {
  template <typename X, typename S> static auto map(const X& x, const S& s) {
    return (x == s).template cast<typename X::Scalar>();
  }
};

struct CountZeros : Plus {
  template <typename X, typename S> static auto map(const X& x, const S&) {
    using A = typename X::Scalar;
    return (x == A(0)).template cast<A>();
  }
};

// The product of the nonzero elements (ReduceProd's gradient with zeros).
struct NonzeroProduct : Times {
  template <typename X, typename S> static auto map(const X& x, const S&) {
    using A = typename X::Scalar;
    return (x == A(0)).select(A(1), x);
  }
};

// Rounding: summing m values one after the other errs by up to m roundings.
// A long line is folded pairwise down to pieces of kFoldPiece elements, and
// the lines of an output row are combined in groups of kLineGroup, the groups
// pairwise (PairwiseRows), so the error grows with the logarithm of the count.
constexpr std::int64_t kFoldPiece = 1024;
constexpr std::int64_t kLineGroup = 256;
// Lines of a middle-axis sum added per pass over its row of partial sums (a
// divisor of kLineGroup).
constexpr std::int64_t kFusedLines = 4;

template <typename P, typename A> A fold_line(const A* x, std::int64_t n, A s) {
  // A plain sum of a short piece (reduce_lines::sum_rows): without the set-up
  // of an Eigen reduction, which costs as much as the adds on rows of 56.
  if constexpr (std::is_same_v<P, Sum> && std::is_floating_point_v<A>)
    if (n <= kFoldPiece) {
      A r;
      reduce_lines::sum_rows(x, &r, 1, n);
      return r;
    }
  if (n <= kFoldPiece) return P::fold(P::map(ConstMap<A>(x, n), Array<A>::Constant(n, s)));
  const std::int64_t half = n / 2;
  return P::join(fold_line<P>(x, half, s), fold_line<P>(x + half, n - half, s));
}

// One thread's partial rows of the groups after an output row's first: a
// stack whose entries hold 1, 2, 4, ... groups, merged when two equal
// sizes meet (the rows are at most a column block long).
template <typename A> struct PairwiseRows {
  std::vector<Array<A>> rows;
  std::vector<std::int64_t> groups;
  std::size_t depth = 0;

  auto top(std::int64_t n) { return rows[depth - 1].head(n); }
  void push(std::int64_t n) {
    if (depth == rows.size()) {
      rows.emplace_back();
      groups.push_back(0);
    }
    if (rows[depth].size() < n) rows[depth].resize(n);
    groups[depth++] = 1;
  }
  // After a group is complete.
  template <typename P> void merge(std::int64_t n) {
    while (depth >= 2 && groups[depth - 1] == groups[depth - 2]) {
      rows[depth - 2].head(n) = P::combine(rows[depth - 2].head(n), rows[depth - 1].head(n));
      groups[depth - 2] *= 2;
      --depth;
    }
  }
};

// Calls piece(p, begin, end) for the `threads` consecutive pieces p of [0, n), in parallel.
template <typename F> void for_each_piece(int threads, std::int64_t n, F&& piece) {
  parallel_ranges(threads, threads, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t p = b; p < e; ++p) piece(p, n * p / threads, n * (p + 1) / threads);
  });
}

// Nothing to do after reduce_pass.
struct NoFinish {
  void operator()(std::int64_t, std::int64_t) const {}
};

// acc[o] = the policy's reduction of the input elements of output o;
// aux[o] is the policy's s (nullptr when it has none). Then finish(begin,
// end) over ranges covering the outputs (ReduceMean's division): on the
// threads of the rows where each thread has its own (the last axes
// reduced), so each is divided while in cache rather than on one thread after.
template <typename P, typename A, typename Finish = NoFinish>
void reduce_pass(const ReducePlan& plan, int threads, const A* x, A* acc, std::type_identity_t<const A*> aux,
                 Finish&& finish = {}) {
  if (splits_lines(plan, threads)) {
    std::vector<A> parts(static_cast<std::size_t>(threads));
    for_each_long_line(plan, [&](std::int64_t in, std::int64_t out, std::int64_t n, std::int64_t k) {
      const A s = aux ? aux[out] : A(0);
      for_each_piece(threads, n, [&](std::int64_t p, std::int64_t lo, std::int64_t hi) {
        parts[static_cast<std::size_t>(p)] = fold_line<P>(x + in + lo, hi - lo, s);
      });
      A r = parts[0];
      for (std::size_t p = 1; p < parts.size(); ++p) r = P::join(r, parts[p]);
      acc[out] = k == 0 ? r : P::join(acc[out], r);
    });
    finish(0, plan.outputs);
    return;
  }
  if constexpr (std::is_same_v<P, Sum> && std::is_floating_point_v<A>)
    if (contiguous_rows(plan) && plan.line <= kFoldPiece) {  // fold_line's sums, several rows a call
      for_each_row_range(plan, threads, [&](std::int64_t begin, std::int64_t end) {
        reduce_lines::sum_rows(x + begin * plan.line, acc + begin, end - begin, plan.line);
        finish(begin, end);
      });
      return;
    }
  for_each_reduce_line(plan, threads, [&](std::int64_t in, std::int64_t out, std::int64_t n, std::int64_t k) {
    if (plan.line_reduced) {
      const A r = fold_line<P>(x + in, n, aux ? aux[out] : A(0));
      acc[out] = k == 0 ? r : P::join(acc[out], r);
      return;
    }
    const ConstMap<A> v(x + in, n);
    const ConstMap<A> s(aux ? aux + out : x + in, n);
    MutMap<A> a(acc + out, n);
    const bool starts = k % kLineGroup == 0;
    if (k < kLineGroup) {  // the first group, straight into acc
      if constexpr (std::is_same_v<P, Sum> && std::is_floating_point_v<A>) {
        // The plain sum at the CPU's vector width (reduce_lines.hpp). With one
        // reduced axis besides the line, line k + c is at in + c * stride:
        // the call of line k adds lines k .. k + kFusedLines - 1 in one pass
        // over acc, and the calls of the others do nothing.
        if (plan.reduced_dims.size() == 1) {
          if (k % kFusedLines != 0) return;
          const std::int64_t stride = plan.reduced_strides[0];
          const std::int64_t count = std::min(kFusedLines, std::min(kLineGroup, plan.lines) - k);
          if (starts) {
            std::memcpy(acc + out, x + in, static_cast<std::size_t>(n) * sizeof(A));
            reduce_lines::add_lines(acc + out, x + in + stride, stride, count - 1, n);
          } else {
            reduce_lines::add_lines(acc + out, x + in, stride, count, n);
          }
          return;
        }
        if (starts)
          std::memcpy(acc + out, x + in, static_cast<std::size_t>(n) * sizeof(A));
        else
          reduce_lines::add(acc + out, x + in, n);
        return;
      }
      if (starts)
        a = P::map(v, s);
      else
        a = P::combine(a, P::map(v, s));
      return;
    }
    thread_local PairwiseRows<A> partial;
    if (starts) {
      partial.push(n);
      partial.top(n) = P::map(v, s);
    } else {
      partial.top(n) = P::combine(partial.top(n), P::map(v, s));
    }
    const bool last = k == plan.lines - 1;
    if (k % kLineGroup != kLineGroup - 1 && !last) return;
    partial.template merge<P>(n);
    if (!last) return;
    for (; partial.depth > 0; --partial.depth) a = P::combine(a, partial.top(n));
  });
  finish(0, plan.outputs);
}

// ---- Gradient spreads: dx[i] += grad(x[i], a[o], b[o]) for the output o of
// each input element i; a and b are per-output factors.

struct Broadcast {
  template <typename X, typename F, typename G> static auto grad(const X&, const F& a, const G&) { return a; }
};

struct Linear {
  template <typename X, typename F, typename G> static auto grad(const X& x, const F& a, const G&) {
    return x * a;
  }
};

struct ExpOfShifted {
  template <typename X, typename F, typename G> static auto grad(const X& x, const F& a, const G& b) {
    return a * (x - b).exp();
  }
};

// a where x equals b (a tied extreme), else 0.
struct WhereEqual {
  template <typename X, typename F, typename G> static auto grad(const X& x, const F& a, const G& b) {
    using A = typename X::Scalar;
    return (x == b).select(a, A(0));
  }
};

// a / x for a nonzero x, else b (docs/operators.md: ReduceProd with zeros).
struct ProductGrad {
  template <typename X, typename F, typename G> static auto grad(const X& x, const F& a, const G& b) {
    using A = typename X::Scalar;
    return (x != A(0)).select(a / x, b);
  }
};

// x may alias dx where the spread does not read it (Broadcast). Each input
// element is written once, so the Broadcast spread can overwrite dx instead
// of adding into it (`overwrite`, an uninitialised dx).
template <typename S, typename A>
void spread(const ReducePlan& plan, int threads, const A* x, const A* a, const A* b, A* dx, bool overwrite = false) {
  if (splits_lines(plan, threads)) {
    for_each_long_line(plan, [&](std::int64_t in, std::int64_t out, std::int64_t n, std::int64_t) {
      for_each_piece(threads, n, [&](std::int64_t, std::int64_t lo, std::int64_t hi) {
        const std::int64_t m = hi - lo;
        MutMap<A> d(dx + in + lo, m);
        if constexpr (std::is_same_v<S, Broadcast>)
          if (overwrite) {
            d.setConstant(a[out]);
            return;
          }
        d += S::grad(ConstMap<A>(x + in + lo, m), Array<A>::Constant(m, a[out]), Array<A>::Constant(m, b[out]));
      });
    });
    return;
  }
  // A large dx overwritten streams past the caches (stream_lines.hpp), in
  // runs long enough to pay for the store fence that ends each.
  const bool large =
      overwrite && static_cast<std::size_t>(plan.input_count) * sizeof(A) >= stream_lines::stream_bytes();
  if constexpr (std::is_same_v<S, Broadcast>)
    if (overwrite && contiguous_rows(plan) && !(large && plan.line >= stream_lines::kMinStreamElements)) {
      for_each_row_range(plan, threads, [&](std::int64_t begin, std::int64_t end) {
        reduce_lines::fill_rows(dx + begin * plan.line, a + begin, end - begin, plan.line);
      });
      return;
    }
  for_each_reduce_line(plan, threads, [&](std::int64_t in, std::int64_t out, std::int64_t n, std::int64_t) {
    if constexpr (std::is_same_v<S, Broadcast>) {
      // Line loops at the CPU's vector width (reduce_lines.hpp), and no Eigen
      // set-up per short row.
      const bool stream = large && n >= stream_lines::kMinStreamElements;
      if (stream && plan.line_reduced)
        stream_lines::write_fill(dx + in, a[out], n);
      else if (stream)
        stream_lines::write_scaled(dx + in, a + out, A(1), n);
      else if (overwrite && plan.line_reduced)
        MutMap<A>(dx + in, n).setConstant(a[out]);
      else if (overwrite)
        std::copy_n(a + out, n, dx + in);
      else if (plan.line_reduced)
        reduce_lines::add_scalar(dx + in, a[out], n);
      else
        reduce_lines::add(dx + in, a + out, n);
      return;
    }
    MutMap<A> d(dx + in, n);
    const ConstMap<A> v(x + in, n);
    if (!plan.line_reduced)
      d += S::grad(v, ConstMap<A>(a + out, n), ConstMap<A>(b + out, n));
    else
      d += S::grad(v, Array<A>::Constant(n, a[out]), Array<A>::Constant(n, b[out]));
  });
}

// ---- Forward.

template <typename A> A empty_value(ReduceKind kind) {
  constexpr bool real = std::is_floating_point_v<A>;
  using L = std::numeric_limits<A>;
  switch (kind) {
    case ReduceKind::Prod: return A(1);
    case ReduceKind::Mean: return real ? L::quiet_NaN() : A(0);
    case ReduceKind::Max:
    case ReduceKind::LogSumExp: return real ? -L::infinity() : L::lowest();
    case ReduceKind::Min: return real ? L::infinity() : L::max();
    default: return A(0);
  }
}

// LogSumExp's parts without overflow: the slice's maximum, the shift
// subtracted (the maximum, or 0 where it is not finite: Eigen's exp clamps
// its argument, so those slices are the caller's), and sum(exp(x - shift)).
template <typename A>
void log_sum_exp_parts(const ReducePlan& plan, int threads, const A* x, A* max, Array<A>& shift, Array<A>& sum) {
  reduce_pass<Max>(plan, threads, x, max, nullptr);
  const ConstMap<A> m(max, plan.outputs);
  shift = m.isFinite().select(m, A(0));
  sum.resize(plan.outputs);
  reduce_pass<ExpShifted>(plan, threads, x, sum.data(), shift.data());
}

// A: float or double for every kind; uint64 (int64's bits, so sums wrap
// without undefined behaviour) for Sum, Mean, Prod, SumSquare; int8, uint8,
// int64 for Max, Min.
template <typename A>
void forward_typed(ReduceKind kind, const ReducePlan& plan, const A* x, A* y, int threads) {
  MutMap<A> out(y, plan.outputs);
  if (plan.input_count == 0) {
    out.setConstant(empty_value<A>(kind));
    return;
  }
  switch (kind) {
    case ReduceKind::Sum: reduce_pass<Sum>(plan, threads, x, y, nullptr); return;
    case ReduceKind::SumSquare: reduce_pass<Square>(plan, threads, x, y, nullptr); return;
    case ReduceKind::Prod: reduce_pass<Product>(plan, threads, x, y, nullptr); return;
    case ReduceKind::Max: reduce_pass<Max>(plan, threads, x, y, nullptr); return;
    case ReduceKind::Min: reduce_pass<Min>(plan, threads, x, y, nullptr); return;
    case ReduceKind::Mean:
      reduce_pass<Sum>(plan, threads, x, y, nullptr, [&](std::int64_t begin, std::int64_t end) {
        if constexpr (std::is_floating_point_v<A>) {
          reduce_lines::divide(y + begin, static_cast<A>(plan.reduced), end - begin);
        } else {
          // Signed division of the wrapped sum truncates toward zero (ONNX's reference).
          for (std::int64_t o = begin; o < end; ++o)
            y[o] = static_cast<A>(static_cast<std::int64_t>(y[o]) / plan.reduced);
        }
      });
      return;
    case ReduceKind::L2:
    case ReduceKind::LogSumExp:
      if constexpr (std::is_floating_point_v<A>) {
        if (kind == ReduceKind::L2) {
          reduce_pass<Square>(plan, threads, x, y, nullptr);
          // std::sqrt: Eigen's float32 packets give NaN for +inf (a sum of
          // squares that overflowed) and 0 for a subnormal.
          out = out.unaryExpr([](A v) { return std::sqrt(v); });
          return;
        }
        Array<A> shift, sum;
        log_sum_exp_parts(plan, threads, x, y, shift, sum);
        // A slice whose maximum is inf, -inf or NaN has that as its result.
        out = out.isFinite().select(sum.log() + out, out);
        return;
      }
      break;
  }
  throw Error(std::string(reduce_op_name(kind)) + ": no kernel for this dtype");
}

// v rounded toward zero into I, clamped to I's range (NaN: 0).
template <typename I> I saturate(double v) {
  using L = std::numeric_limits<I>;
  if (std::isnan(v)) return I(0);
  if (v <= static_cast<double>(L::lowest())) return L::lowest();
  if (v >= static_cast<double>(L::max())) return L::max();
  return static_cast<I>(v);
}

Tensor saturated(const Tensor& t, DType to) {
  Tensor out = Tensor::uninitialized(to, t.shape());
  const double* src = t.data<double>();
  visit_dtype(to, [&](auto tag) {
    using I = decltype(tag);
    if constexpr (std::is_integral_v<I>) {
      I* dst = out.data<I>();
      for (std::int64_t i = 0; i < t.numel(); ++i) dst[i] = saturate<I>(src[i]);
    }
  });
  return out;
}

// ---- Backward.

// `overwrite`: Sum and Mean only (reduce_backward zeroes dx for the others).
template <typename A>
void backward_typed(ReduceKind kind, const ReducePlan& plan, const A* x, const A* y, const A* dy, A* dx,
                    A scale, int threads, bool overwrite) {
  const std::int64_t m = plan.outputs;
  const ConstMap<A> g(dy, m);
  Array<A> a(m);
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      a = g * (kind == ReduceKind::Mean ? scale / static_cast<A>(plan.reduced) : scale);
      spread<Broadcast>(plan, threads, dx, a.data(), a.data(), dx, overwrite);
      return;
    case ReduceKind::SumSquare:
      a = g * (2 * scale);
      spread<Linear>(plan, threads, x, a.data(), a.data(), dx);
      return;
    case ReduceKind::L2: {
      // d|x| / dx = x / |x|, and 0 where the norm is 0 (PyTorch's norm).
      const ConstMap<A> norm(y, m);
      a = (norm == A(0)).select(A(0), g * scale / norm);
      spread<Linear>(plan, threads, x, a.data(), a.data(), dx);
      return;
    }
    case ReduceKind::LogSumExp: {
      // The softmax of the slice, exp(x - m) / sum, from x rather than from y:
      // exp(x - y) would carry y's rounding (1e-3 off at 1e4 in float32).
      Array<A> max(m), shift, sum;
      log_sum_exp_parts(plan, threads, x, max.data(), shift, sum);
      a = g * scale / sum;
      spread<ExpOfShifted>(plan, threads, x, a.data(), shift.data(), dx);
      return;
    }
    case ReduceKind::Max:
    case ReduceKind::Min: {
      // Split equally among the tied extremes (docs/operators.md, gradient conventions).
      Array<A> ties(m);
      reduce_pass<CountEqual>(plan, threads, x, ties.data(), y);
      a = g * scale / ties;
      spread<WhereEqual>(plan, threads, x, a.data(), y, dx);
      return;
    }
    case ReduceKind::Prod: {
      // No zero: dy * prod / x. One zero: only it gets dy * (product of the
      // others). Two or more: 0. Nothing divides by zero.
      Array<A> zeros(m), nonzero(m);
      reduce_pass<CountZeros>(plan, threads, x, zeros.data(), nullptr);
      reduce_pass<NonzeroProduct>(plan, threads, x, nonzero.data(), nullptr);
      const Array<A> gp = g * scale * nonzero;
      a = (zeros == A(0)).select(gp, A(0));
      const Array<A> b = (zeros == A(1)).select(gp, A(0));
      spread<ProductGrad>(plan, threads, x, a.data(), b.data(), dx);
      return;
    }
  }
}

// ---- ArgMax.

template <typename A> bool beats(A v, A best, bool last) {
  if (is_nan(v)) return last || !is_nan(best);  // NaN is the largest
  if (is_nan(best)) return false;
  return last ? v >= best : v > best;
}

template <typename A>
void argmax_typed(const ReducePlan& plan, const A* x, std::int64_t* index, bool last, int threads) {
  Array<A> best(plan.outputs);
  for_each_reduce_line(plan, threads, [&](std::int64_t in, std::int64_t out, std::int64_t n, std::int64_t k) {
    const A* v = x + in;
    if (!plan.line_reduced) {
      for (std::int64_t j = 0; j < n; ++j)
        if (k == 0 || beats(v[j], best[out + j], last)) {
          best[out + j] = v[j];
          index[out + j] = k;
        }
      return;
    }
    for (std::int64_t j = 0; j < n; ++j)
      if ((k == 0 && j == 0) || beats(v[j], best[out], last)) {
        best[out] = v[j];
        index[out] = k * n + j;
      }
  });
}

}  // namespace

const char* reduce_op_name(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return "ReduceSum";
    case ReduceKind::Mean: return "ReduceMean";
    case ReduceKind::Prod: return "ReduceProd";
    case ReduceKind::Max: return "ReduceMax";
    case ReduceKind::Min: return "ReduceMin";
    case ReduceKind::L2: return "ReduceL2";
    case ReduceKind::SumSquare: return "ReduceSumSquare";
    case ReduceKind::LogSumExp: return "ReduceLogSumExp";
  }
  return "Reduce";
}

ReduceNeeds reduce_backward_needs(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean: return {false, false};
    case ReduceKind::SumSquare:
    case ReduceKind::Prod:
    case ReduceKind::LogSumExp: return {true, false};
    default: return {true, true};
  }
}

Tensor reduce_forward(ReduceKind kind, const ReducePlan& plan, const Tensor& x, const Shape& out_shape,
                      int threads) {
  const DType dtype = x.dtype();
  if (!is_float(dtype) && (kind == ReduceKind::L2 || kind == ReduceKind::LogSumExp))
    return saturated(reduce_forward(kind, plan, x.cast(DType::Float64), out_shape, threads), dtype);
  Tensor y = Tensor::uninitialized(dtype, out_shape);
  switch (dtype) {
    case DType::Float32: forward_typed(kind, plan, x.data<float>(), y.data<float>(), threads); break;
    case DType::Float64: forward_typed(kind, plan, x.data<double>(), y.data<double>(), threads); break;
    case DType::Int8: forward_typed(kind, plan, x.data<std::int8_t>(), y.data<std::int8_t>(), threads); break;
    case DType::UInt8: forward_typed(kind, plan, x.data<std::uint8_t>(), y.data<std::uint8_t>(), threads); break;
    case DType::Int64:
      if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
        forward_typed(kind, plan, x.data<std::int64_t>(), y.data<std::int64_t>(), threads);
      } else {
        // Signed and unsigned variants of one type may alias.
        forward_typed(kind, plan, reinterpret_cast<const std::uint64_t*>(x.data<std::int64_t>()),
                      reinterpret_cast<std::uint64_t*>(y.data<std::int64_t>()), threads);
      }
      break;
    default:
      throw UnsupportedDType(std::string(reduce_op_name(kind)) + " has no kernel for dtype " +
                             std::string(dtype_name(dtype)));
  }
  return y;
}

void reduce_backward(ReduceKind kind, const ReducePlan& plan, const Tensor& x, const Tensor& y,
                     const Tensor& dy, Tensor& dx, double scale, int threads, bool overwrite) {
  if (plan.input_count == 0) return;
  if (overwrite && kind != ReduceKind::Sum && kind != ReduceKind::Mean) {
    zero_fill(dx, threads);  // their spreads add
    overwrite = false;
  }
  visit_float_dtype(dx.dtype(), [&](auto tag) {
    using A = decltype(tag);
    if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>) {
      A* d = dx.data<A>();
      backward_typed<A>(kind, plan, x.empty() ? d : x.data<A>(), y.empty() ? d : y.data<A>(), dy.data<A>(), d,
                        static_cast<A>(scale), threads, overwrite);
    }
  });
}

Tensor argmax_forward(const ReducePlan& plan, const Tensor& x, const Shape& out_shape, bool last,
                      int threads) {
  Tensor index = Tensor::uninitialized(DType::Int64, out_shape);
  std::int64_t* ip = index.data<std::int64_t>();
  switch (x.dtype()) {
    case DType::Float32: argmax_typed(plan, x.data<float>(), ip, last, threads); break;
    case DType::Float64: argmax_typed(plan, x.data<double>(), ip, last, threads); break;
    case DType::Int8: argmax_typed(plan, x.data<std::int8_t>(), ip, last, threads); break;
    case DType::UInt8: argmax_typed(plan, x.data<std::uint8_t>(), ip, last, threads); break;
    case DType::Int64: argmax_typed(plan, x.data<std::int64_t>(), ip, last, threads); break;
    default: throw UnsupportedDType("ArgMax has no kernel for dtype " + std::string(dtype_name(x.dtype())));
  }
  return index;
}

}  // namespace nodeflow
