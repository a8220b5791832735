//===- Reduction.cpp - reduce_*, arg_max/min, cumsum and topk -------------===//
//
// Float reductions accumulate in double; integer ones in int64/uint64 with
// wrap-around. Max/min propagate NaN as numpy does; an empty reduction gives
// the identity (0 for sums, 1 for products, -inf/+inf for max/min and
// log-sums, NaN for the mean).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

/// The flat input indices that reduce into each output element.
struct Groups {
  SmallVector<int64_t, 4> outShape;
  std::vector<std::vector<int64_t>> members;
};

FailureOr<Groups> groupForReduction(OpCall &call, const HostTensor &x,
                                    ArrayRef<int64_t> axes, bool keepdims) {
  SmallVector<bool, 4> reduced(x.rank(), false);
  for (int64_t a : axes) {
    if (a < 0 || a >= x.rank()) {
      call.error() << "axis " << a << " out of range for rank " << x.rank();
      return failure();
    }
    reduced[a] = true;
  }
  Groups g;
  SmallVector<int64_t, 4> keptShape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (!reduced[d])
      keptShape.push_back(x.shape[d]);
    if (!reduced[d])
      g.outShape.push_back(x.shape[d]);
    else if (keepdims)
      g.outShape.push_back(1);
  }
  SmallVector<int64_t, 4> keptStrides = stridesOf(keptShape);
  g.members.resize(product(keptShape));
  int64_t flat = 0;
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index) {
    int64_t out = 0, k = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!reduced[d])
        out += index[d] * keptStrides[k++];
    g.members[out].push_back(flat++);
  });
  return g;
}

using Kind = ReductionKind;

template <Kind kind> Results reduce(OpCall &call) {
  auto op = call.get<ReductionOpInterface>();
  const HostTensor &x = call.in(0);
  FailureOr<Groups> groups =
      groupForReduction(call, x, op.getAxes(), op.getKeepdims());
  if (failed(groups))
    return failure();
  HostTensor out = call.makeResult(groups->outShape);
  visitScalar(x.scalar, [&](auto tag) {
    using T = decltype(tag);
    constexpr bool floating = std::is_same_v<T, double>;
    for (auto [o, members] : llvm::enumerate(groups->members)) {
      if constexpr (kind == Kind::Max || kind == Kind::Min) {
        T best = kind == Kind::Max ? std::numeric_limits<T>::lowest()
                                   : std::numeric_limits<T>::max();
        if constexpr (floating)
          best = kind == Kind::Max ? -INFINITY : INFINITY;
        for (int64_t i : members) {
          T v = x.get<T>(i);
          if constexpr (floating)
            if (std::isnan(v)) {
              best = v;
              break;
            }
          best = kind == Kind::Max ? std::max(best, v) : std::min(best, v);
        }
        out.set<T>(o, best);
      } else if constexpr (floating) {
        double acc = kind == Kind::Prod ? 1.0 : 0.0;
        double shift = 0;
        if (kind == Kind::LogSumExp) {
          shift = -INFINITY;
          for (int64_t i : members)
            shift = std::max(shift, x.getF(i));
          if (std::isinf(shift))
            shift = 0;
        }
        for (int64_t i : members) {
          double v = x.getF(i);
          switch (kind) {
          case Kind::Prod:
            acc *= v;
            break;
          case Kind::L1:
            acc += std::fabs(v);
            break;
          case Kind::L2:
          case Kind::SumSquare:
            acc += v * v;
            break;
          case Kind::LogSumExp:
            acc += std::exp(v - shift);
            break;
          default:
            acc += v;
            break;
          }
        }
        if (kind == Kind::Mean)
          acc /= (double)members.size();
        else if (kind == Kind::L2)
          acc = std::sqrt(acc);
        else if (kind == Kind::LogSum)
          acc = std::log(acc);
        else if (kind == Kind::LogSumExp)
          acc = shift + std::log(acc);
        out.setF(o, acc);
      } else {
        uint64_t acc = kind == Kind::Prod ? 1 : 0;
        for (int64_t i : members) {
          T v = x.get<T>(i);
          switch (kind) {
          case Kind::Prod:
            acc *= (uint64_t)v;
            break;
          case Kind::L1:
            acc += (uint64_t)(v < 0 ? T(0) - v : v);
            break;
          case Kind::L2:
          case Kind::SumSquare:
            acc += (uint64_t)v * (uint64_t)v;
            break;
          default:
            acc += (uint64_t)v;
            break;
          }
        }
        if (kind == Kind::Mean)
          out.setF(o, members.empty()
                          ? 0.0
                          : (double)(T)acc / (double)members.size());
        else if (kind == Kind::L2)
          out.setF(o, std::sqrt((double)(T)acc));
        else if (kind == Kind::LogSum)
          out.setF(o, std::log((double)(T)acc));
        else if (kind == Kind::LogSumExp) {
          double sum = 0;
          for (int64_t i : members)
            sum += std::exp((double)x.get<T>(i));
          out.setF(o, std::log(sum));
        } else
          out.set<T>(o, (T)acc);
      }
    }
  });
  return single(std::move(out));
}

/// Index of the max/min along `axis`; ties give the first index unless
/// select_last_index.
template <typename OpTy, bool isMax> Results runArgReduce(OpCall &call) {
  auto op = call.get<OpTy>();
  const HostTensor &x = call.in(0);
  bool last = op.getSelectLastIndex();
  int64_t axis = op.getAxis();
  if (x.rank() == 0) {
    HostTensor out = call.makeResult({});
    return single(std::move(out));
  }
  if (axis < 0 || axis >= x.rank()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  FailureOr<Groups> groups =
      groupForReduction(call, x, {axis}, op.getKeepdims());
  if (failed(groups))
    return failure();
  if (x.shape[axis] == 0) {
    call.error() << "cannot take the arg " << (isMax ? "max" : "min")
                 << " of an empty axis";
    return failure();
  }
  HostTensor out = call.makeResult(groups->outShape);
  visitScalar(x.scalar, [&](auto tag) {
    using T = decltype(tag);
    for (auto [o, members] : llvm::enumerate(groups->members)) {
      int64_t best = 0;
      T bestValue = x.get<T>(members[0]);
      for (size_t j = 1; j < members.size(); ++j) {
        T v = x.get<T>(members[j]);
        bool better = isMax ? (v > bestValue || (last && v == bestValue))
                            : (v < bestValue || (last && v == bestValue));
        if (better) {
          best = j;
          bestValue = v;
        }
      }
      out.setI(o, best);
    }
  });
  return single(std::move(out));
}

/// CumSum and CumProd: the running sum (product) along the axis;
/// integers wrap.
template <typename OpTy, bool Product> Results runCumulative(OpCall &call) {
  auto op = call.get<OpTy>();
  const HostTensor &x = call.in(0);
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= x.rank()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  HostTensor out = call.makeResult(x.shape);
  visitScalar(x.scalar, [&](auto tag) {
    using T = decltype(tag);
    auto combine = [](T acc, T v) -> T {
      if constexpr (std::is_same_v<T, double>)
        return Product ? acc * v : acc + v;
      else
        return Product ? (T)((uint64_t)acc * (uint64_t)v)
                       : (T)((uint64_t)acc + (uint64_t)v);
    };
    forEachLine(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
      T acc = Product ? 1 : 0;
      for (int64_t j = 0; j < n; ++j) {
        int64_t i = base + (reverse ? n - 1 - j : j) * stride;
        T v = x.get<T>(i);
        if (!exclusive)
          acc = combine(acc, v);
        out.set<T>(i, acc);
        if (exclusive)
          acc = combine(acc, v);
      }
    });
  });
  return single(std::move(out));
}

/// The k largest (smallest) along `axis`, ordered by value and then by
/// the lower index.
Results runTopK(OpCall &call) {
  auto op = call.get<TopKOp>();
  const HostTensor &x = call.in(0);
  int64_t axis = op.getAxis(), k = op.getK();
  bool largest = op.getLargest();
  if (axis < 0 || axis >= x.rank()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  if (k < 0 || k > x.shape[axis]) {
    call.error() << "k = " << k << " exceeds the axis size " << x.shape[axis];
    return failure();
  }
  SmallVector<int64_t, 4> shape(x.shape);
  shape[axis] = k;
  HostTensor values = call.makeResult(shape, 0);
  HostTensor indices = call.makeResult(shape, 1);
  SmallVector<int64_t, 4> outStrides = stridesOf(shape);
  SmallVector<int64_t, 4> outer(x.shape);
  outer[axis] = 1;
  SmallVector<int64_t, 4> inStrides = stridesOf(x.shape);
  visitScalar(x.scalar, [&](auto tag) {
    using T = decltype(tag);
    forEachIndex(outer, [&](ArrayRef<int64_t> index) {
      int64_t inBase = offsetOf(index, inStrides);
      int64_t outBase = offsetOf(index, outStrides);
      int64_t n = x.shape[axis];
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      auto value = [&](int64_t j) {
        return x.get<T>(inBase + j * inStrides[axis]);
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        T va = value(a), vb = value(b);
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t o = outBase + j * outStrides[axis];
        values.copyElement(o, x, inBase + order[j] * inStrides[axis]);
        indices.setI(o, order[j]);
      }
    });
  });
  return SmallVector<TensorRef>{share(std::move(values)),
                                share(std::move(indices))};
}

/// Every ReductionOpInterface op, dispatched on its kind.
Results runReduce(OpCall &call) {
  switch (call.get<ReductionOpInterface>().getReductionKind()) {
  case Kind::Sum:
    return reduce<Kind::Sum>(call);
  case Kind::Mean:
    return reduce<Kind::Mean>(call);
  case Kind::Max:
    return reduce<Kind::Max>(call);
  case Kind::Min:
    return reduce<Kind::Min>(call);
  case Kind::Prod:
    return reduce<Kind::Prod>(call);
  case Kind::L1:
    return reduce<Kind::L1>(call);
  case Kind::L2:
    return reduce<Kind::L2>(call);
  case Kind::SumSquare:
    return reduce<Kind::SumSquare>(call);
  case Kind::LogSum:
    return reduce<Kind::LogSum>(call);
  case Kind::LogSumExp:
    return reduce<Kind::LogSumExp>(call);
  }
  llvm_unreachable("unknown reduction kind");
}

/// Registers runReduce for each op of the dialect with the reduction
/// interface, so a new reduction op needs no line here.
template <typename... Ops> void addReductionKernels(KernelTable &t) {
  (
      [&] {
        if constexpr (Ops::template hasTrait<ReductionOpInterface::Trait>())
          addKernel<Ops>(t, runReduce);
      }(),
      ...);
}

} // namespace

void cgc::interp::registerReductionKernels(KernelTable &t) {
  addReductionKernels<
#define GET_OP_LIST
#include "cgc/Dialect/Cgc/IR/CgcOps.cpp.inc"
      >(t);
  addKernel<ArgMaxOp>(t, runArgReduce<ArgMaxOp, true>);
  addKernel<ArgMinOp>(t, runArgReduce<ArgMinOp, false>);
  addKernel<CumSumOp>(t, runCumulative<CumSumOp, false>);
  addKernel<CumProdOp>(t, runCumulative<CumProdOp, true>);
  addKernel<TopKOp>(t, runTopK);
}
