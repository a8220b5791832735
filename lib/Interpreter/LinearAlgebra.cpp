//===- LinearAlgebra.cpp - matmul, gemm and einsum ------------------------===//
//
// Products accumulate in double for floats and in wrapping int64 for
// integers.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

/// Accumulator: double for floats, wrapping uint64 arithmetic for integers.
template <typename T> struct Acc {
  T value = 0;
  void add(T a, T b) {
    if constexpr (std::is_same_v<T, double>)
      value += a * b;
    else
      value = (T)((uint64_t)value + (uint64_t)a * (uint64_t)b);
  }
};

/// ONNX MatMul (numpy.matmul): 1-D operands are promoted (and the promoted
/// dim dropped from the result), batch dims broadcast.
Results runMatMul(OpCall &call) {
  const HostTensor &a = call.in(0), &b = call.in(1);
  if (a.rank() == 0 || b.rank() == 0) {
    call.error() << "operands must have rank >= 1";
    return failure();
  }
  SmallVector<int64_t, 4> as(a.shape), bs(b.shape);
  bool aVector = as.size() == 1, bVector = bs.size() == 1;
  if (aVector)
    as.insert(as.begin(), 1);
  if (bVector)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back();
  int64_t k2 = bs[bs.size() - 2], n = bs.back();
  if (k != k2) {
    call.error() << "contraction dims differ: " << formatDims(a.shape) << " x "
                 << formatDims(b.shape);
    return failure();
  }
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(as).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bs).drop_back(2);
  FailureOr<SmallVector<int64_t, 4>> batch =
      broadcastRuntime(call, {aBatch, bBatch});
  if (failed(batch))
    return failure();
  SmallVector<int64_t, 4> aStrides = broadcastStrides(aBatch, *batch);
  SmallVector<int64_t, 4> bStrides = broadcastStrides(bBatch, *batch);
  for (int64_t &s : aStrides)
    s *= m * k;
  for (int64_t &s : bStrides)
    s *= k * n;
  SmallVector<int64_t, 4> shape(*batch);
  if (!aVector)
    shape.push_back(m);
  if (!bVector)
    shape.push_back(n);
  HostTensor out = call.makeResult(shape);
  visitScalar(a.scalar, [&](auto tag) {
    using T = decltype(tag);
    int64_t flat = 0;
    auto body = [&](ArrayRef<int64_t> index) {
      int64_t aBase = offsetOf(index, aStrides),
              bBase = offsetOf(index, bStrides);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          Acc<T> acc;
          for (int64_t p = 0; p < k; ++p)
            acc.add(a.get<T>(aBase + i * k + p), b.get<T>(bBase + p * n + j));
          out.set<T>(flat++, acc.value);
        }
    };
    if (batch->empty())
      body({});
    else
      forEachIndex(*batch, body);
  });
  return single(std::move(out));
}

/// alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast.
Results runGemm(OpCall &call) {
  auto op = call.get<GemmOp>();
  const HostTensor &a = call.in(0), &b = call.in(1);
  const HostTensor *c = call.optional(op.getC());
  if (a.rank() != 2 || b.rank() != 2) {
    call.error() << "A and B must be 2-D";
    return failure();
  }
  bool ta = op.getTransA(), tb = op.getTransB();
  int64_t m = a.shape[ta ? 1 : 0], k = a.shape[ta ? 0 : 1];
  int64_t k2 = b.shape[tb ? 1 : 0], n = b.shape[tb ? 0 : 1];
  if (k != k2) {
    call.error() << "contraction dims differ: " << formatDims(a.shape) << " x "
                 << formatDims(b.shape);
    return failure();
  }
  SmallVector<int64_t, 4> shape = {m, n};
  SmallVector<int64_t, 4> cStrides;
  if (c) {
    FailureOr<SmallVector<int64_t, 4>> bc =
        broadcastRuntime(call, {shape, c->shape});
    if (failed(bc))
      return failure();
    if (*bc != shape) {
      call.error() << "C of shape " << formatDims(c->shape)
                   << " does not broadcast to " << formatDims(shape);
      return failure();
    }
    cStrides = broadcastStrides(c->shape, shape);
  }
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  HostTensor out = call.makeResult(shape);
  visitScalar(a.scalar, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Acc<T> acc;
        for (int64_t p = 0; p < k; ++p)
          acc.add(a.get<T>(ta ? p * m + i : i * k + p),
                  b.get<T>(tb ? j * k + p : p * n + j));
        int64_t flat = i * n + j;
        T cValue = c ? c->get<T>(i * cStrides[0] + j * cStrides[1]) : T(0);
        if constexpr (std::is_same_v<T, double>) {
          out.setF(flat, alpha * acc.value + beta * cValue);
        } else if (alpha == 1.0 && beta == 1.0) {
          out.set<T>(flat, (T)((uint64_t)acc.value + (uint64_t)cValue));
        } else {
          out.setF(flat, alpha * (double)acc.value + beta * (double)cValue);
        }
      }
  });
  return single(std::move(out));
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// Labels are letters; the dims under "..." get the ids kEllipsis + i where
/// i counts the broadcast ellipsis dims from the left.
constexpr int kEllipsis = 1000;

/// Parses one term into its labels; "..." is returned as -1.
FailureOr<SmallVector<int>> parseTerm(OpCall &call, StringRef text) {
  SmallVector<int> labels;
  bool sawEllipsis = false;
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i).starts_with("...")) {
      if (sawEllipsis) {
        call.error() << "two ellipses in term '" << text << "'";
        return failure();
      }
      sawEllipsis = true;
      labels.push_back(-1);
      i += 3;
      continue;
    }
    if (!llvm::isAlpha(text[i])) {
      call.error() << "invalid character '" << text[i] << "' in '" << text
                   << "'";
      return failure();
    }
    labels.push_back(text[i++]);
  }
  return labels;
}

Results runEinsum(OpCall &call) {
  std::string equation;
  for (char ch : call.get<EinsumOp>().getEquation())
    if (!llvm::isSpace(ch))
      equation.push_back(ch);
  StringRef eq(equation);
  size_t arrow = eq.find("->");
  SmallVector<StringRef> termTexts;
  eq.substr(0, arrow).split(termTexts, ',');
  if (termTexts.size() != call.operands.size()) {
    call.error() << "equation '" << equation << "' has " << termTexts.size()
                 << " terms for " << call.operands.size() << " operands";
    return failure();
  }
  // Expand each input term so that it has one label per dim.
  int64_t ellipsisRank = 0;
  SmallVector<SmallVector<int>> parsed;
  for (auto [i, text] : llvm::enumerate(termTexts)) {
    FailureOr<SmallVector<int>> labels = parseTerm(call, text);
    if (failed(labels))
      return failure();
    int64_t explicitLabels =
        llvm::count_if(*labels, [](int l) { return l >= 0; });
    bool hasEllipsis = explicitLabels != (int64_t)labels->size();
    int64_t rank = call.in(i).rank();
    if ((!hasEllipsis && rank != explicitLabels) || rank < explicitLabels) {
      call.error() << "term '" << text << "' does not match operand #" << i
                   << " of shape " << formatDims(call.in(i).shape);
      return failure();
    }
    if (hasEllipsis)
      ellipsisRank = std::max(ellipsisRank, rank - explicitLabels);
    parsed.push_back(*labels);
  }
  SmallVector<SmallVector<int>> terms;
  std::map<int, int64_t> sizes;
  std::map<int, int> counts;
  for (auto [i, labels] : llvm::enumerate(parsed)) {
    const HostTensor &t = call.in(i);
    int64_t explicitLabels =
        llvm::count_if(labels, [](int l) { return l >= 0; });
    int64_t e = t.rank() - explicitLabels;
    SmallVector<int> term;
    for (int l : labels) {
      if (l >= 0) {
        term.push_back(l);
        continue;
      }
      for (int64_t j = 0; j < e; ++j)
        term.push_back(kEllipsis + (int)(ellipsisRank - e + j));
    }
    for (auto [d, label] : llvm::enumerate(term)) {
      int64_t size = t.shape[d];
      if (label < kEllipsis)
        ++counts[label];
      auto [it, inserted] = sizes.try_emplace(label, size);
      if (inserted || it->second == size || size == 1)
        continue;
      if (it->second == 1) {
        it->second = size;
        continue;
      }
      call.error() << "label sizes differ: " << it->second << " vs " << size;
      return failure();
    }
    terms.push_back(std::move(term));
  }
  SmallVector<int> output;
  if (arrow != StringRef::npos) {
    FailureOr<SmallVector<int>> labels = parseTerm(call, eq.substr(arrow + 2));
    if (failed(labels))
      return failure();
    for (int l : *labels) {
      if (l < 0) {
        for (int64_t j = 0; j < ellipsisRank; ++j)
          output.push_back(kEllipsis + (int)j);
        continue;
      }
      if (!sizes.count(l) || llvm::is_contained(output, l)) {
        call.error() << "output label '" << (char)l
                     << "' is repeated or not in any input";
        return failure();
      }
      output.push_back(l);
    }
  } else {
    for (int64_t j = 0; j < ellipsisRank; ++j)
      output.push_back(kEllipsis + (int)j);
    for (auto [label, count] : counts) // std::map: ASCII order
      if (count == 1)
        output.push_back(label);
  }
  // Every label gets a slot in one index vector: output labels first.
  SmallVector<int> all(output);
  for (auto &entry : sizes)
    if (!llvm::is_contained(all, entry.first))
      all.push_back(entry.first);
  auto slotOf = [&](int label) {
    return (int64_t)(llvm::find(all, label) - all.begin());
  };
  SmallVector<int64_t, 4> outShape, sumShape;
  for (int l : output)
    outShape.push_back(sizes[l]);
  for (size_t s = output.size(); s < all.size(); ++s)
    sumShape.push_back(sizes[all[s]]);
  // Per operand: the stride each slot contributes (0 for absent labels and
  // broadcast size-1 dims).
  SmallVector<SmallVector<int64_t>> slotStrides;
  for (auto [i, term] : llvm::enumerate(terms)) {
    const HostTensor &t = call.in(i);
    SmallVector<int64_t, 4> strides = stridesOf(t.shape);
    SmallVector<int64_t> perSlot(all.size(), 0);
    for (auto [d, label] : llvm::enumerate(term))
      if (t.shape[d] != 1)
        perSlot[slotOf(label)] += strides[d];
    slotStrides.push_back(std::move(perSlot));
  }
  HostTensor out = call.makeResult(outShape);
  Scalar scalar = call.in(0).scalar;
  visitScalar(scalar, [&](auto tag) {
    using T = decltype(tag);
    SmallVector<int64_t> index(all.size(), 0);
    int64_t flat = 0;
    auto outer = [&](ArrayRef<int64_t> outIndex) {
      llvm::copy(outIndex, index.begin());
      T acc = 0;
      auto inner = [&](ArrayRef<int64_t> sumIndex) {
        llvm::copy(sumIndex, index.begin() + output.size());
        T prod = 1;
        for (size_t i = 0; i < terms.size(); ++i) {
          T v = call.in(i).get<T>(offsetOf(index, slotStrides[i]));
          if constexpr (std::is_same_v<T, double>)
            prod *= v;
          else
            prod = (T)((uint64_t)prod * (uint64_t)v);
        }
        if constexpr (std::is_same_v<T, double>)
          acc += prod;
        else
          acc = (T)((uint64_t)acc + (uint64_t)prod);
      };
      if (sumShape.empty())
        inner({});
      else
        forEachIndex(sumShape, inner);
      out.set<T>(flat++, acc);
    };
    if (outShape.empty())
      outer({});
    else
      forEachIndex(outShape, outer);
  });
  return single(std::move(out));
}

} // namespace

void cgc::interp::registerLinearAlgebraKernels(KernelTable &t) {
  addKernel<MatMulOp>(t, runMatMul);
  addKernel<GemmOp>(t, runGemm);
  addKernel<EinsumOp>(t, runEinsum);
}
