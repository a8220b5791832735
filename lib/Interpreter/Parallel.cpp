//===- Parallel.cpp - a program split over ranks, on threads --------------===//
//
// cgc.shard takes this rank's part of a tensor; cgc.all_reduce and
// cgc.all_gather meet the other ranks (threads of this process, one
// interpreter each) in a RankGroup and return the sum of their tensors or
// all of them. interpretRanks runs the
// ranks: the CPU oracle for --tensor-parallel, as cgc-interp is for one GPU.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <thread>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

//===----------------------------------------------------------------------===//
// RankGroup
//===----------------------------------------------------------------------===//

void RankGroup::combine(Collective collective) {
  const HostTensor &first = *contributions.front();
  sumError.clear();
  for (const HostTensor *t : contributions)
    if (t->dtype != first.dtype || t->shape != first.shape) {
      sumError = std::string("the ranks ") +
                 (collective == Collective::Sum ? "all-reduce" : "all-gather") +
                 " tensors of different types (" + first.typeString() +
                 " and " + t->typeString() + ")";
      return;
    }
  int64_t n = first.numElements();
  if (collective == Collective::Gather) {
    SmallVector<int64_t> shape{size};
    llvm::append_range(shape, first.shape);
    sum = HostTensor(first.dtype, shape);
    for (int64_t r = 0; r < size; ++r)
      for (int64_t i = 0; i < n; ++i)
        sum.copyElement(r * n + i, *contributions[r], i);
    return;
  }
  sum = HostTensor(first.dtype, first.shape);
  for (int64_t i = 0; i < n; ++i) {
    double total = 0;
    for (const HostTensor *t : contributions)
      total += t->getF(i);
    sum.setF(i, total);
  }
}

FailureOr<HostTensor> RankGroup::allReduceSum(int64_t rank,
                                              const HostTensor &t,
                                              std::string &error) {
  return meet(rank, t, Collective::Sum, error);
}

FailureOr<HostTensor> RankGroup::allGather(int64_t rank, const HostTensor &t,
                                           std::string &error) {
  return meet(rank, t, Collective::Gather, error);
}

FailureOr<HostTensor> RankGroup::meet(int64_t rank, const HostTensor &t,
                                      Collective collective,
                                      std::string &error) {
  std::unique_lock<std::mutex> lock(mutex);
  if (aborted) {
    error = "another rank failed";
    return failure();
  }
  contributions[rank] = &t;
  uint64_t myRound = round;
  if (++arrived == size) {
    // The last rank to arrive adds for all; the others copy the sum before
    // any of them can start the next round (which needs every rank).
    combine(collective);
    arrived = 0;
    ++round;
    done.notify_all();
  } else {
    done.wait(lock, [&] { return round != myRound || aborted; });
    if (round == myRound) {
      error = "another rank failed";
      return failure();
    }
  }
  if (!sumError.empty()) {
    error = sumError;
    return failure();
  }
  return sum;
}

void RankGroup::abort() {
  std::lock_guard<std::mutex> lock(mutex);
  aborted = true;
  done.notify_all();
}

FailureOr<std::vector<std::vector<HostTensor>>>
cgc::interp::interpretRanks(func::FuncOp func,
                            ArrayRef<std::vector<HostTensor>> inputs,
                            const InterpreterOptions &options) {
  int64_t ranks = inputs.size();
  RankGroup group(ranks);
  std::vector<FailureOr<std::vector<HostTensor>>> outputs(ranks, failure());
  std::vector<std::thread> threads;
  for (int64_t rank = 0; rank < ranks; ++rank)
    threads.emplace_back([&, rank] {
      InterpreterOptions mine = options;
      mine.ranks = &group;
      mine.rank = rank;
      outputs[rank] = interpret(func, inputs[rank], mine);
      if (failed(outputs[rank]))
        group.abort();
    });
  for (std::thread &t : threads)
    t.join();
  std::vector<std::vector<HostTensor>> all;
  for (FailureOr<std::vector<HostTensor>> &o : outputs) {
    if (failed(o))
      return failure();
    all.push_back(std::move(*o));
  }
  return all;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {

/// The rank group of a call, or an error naming what the op needs.
RankGroup *groupOf(OpCall &call, int64_t ranks) {
  RankGroup *group = call.interp.options().ranks;
  if (!group) {
    call.error() << "runs on one of " << ranks
                 << " ranks: interpret the program with its ranks "
                    "(cgc-interp --tensor-parallel="
                 << ranks << ")";
    return nullptr;
  }
  if (group->getSize() != ranks) {
    call.error() << "is split over " << ranks << " ranks, but runs in a group of "
                 << group->getSize();
    return nullptr;
  }
  return group;
}

Results shard(OpCall &call) {
  auto op = call.get<ShardOp>();
  if (!groupOf(call, op.getRanks()))
    return failure();
  const HostTensor &x = call.in(0);
  // The axis as `groups` segments of `segment`, each giving this rank
  // `part` entries from `first` on.
  int64_t axis = op.getAxis(), groups = op.getGroups(),
          segment = x.shape[axis] / groups, part = segment / op.getRanks();
  SmallVector<int64_t> shape(x.shape.begin(), x.shape.end());
  shape[axis] = part * groups;
  HostTensor y = call.makeResult(shape);
  // Rows of `inner` elements: `outer` of them before the axis.
  int64_t inner = 1, outer = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.shape[d];
  for (int64_t d = 0; d < axis; ++d)
    outer *= x.shape[d];
  int64_t first = call.interp.options().rank * part;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t r = 0; r < part; ++r)
        for (int64_t i = 0; i < inner; ++i)
          y.copyElement(((o * groups + g) * part + r) * inner + i, x,
                        (o * x.shape[axis] + g * segment + first + r) *
                                inner +
                            i);
  return single(std::move(y));
}

/// A collective op (cgc.all_reduce, cgc.all_gather): the group's
/// `collective` of every rank's operand.
template <typename OpT>
Results collective(OpCall &call,
                   FailureOr<HostTensor> (RankGroup::*collective)(
                       int64_t, const HostTensor &, std::string &)) {
  auto op = call.get<OpT>();
  RankGroup *group = groupOf(call, op.getRanks());
  if (!group)
    return failure();
  std::string error;
  FailureOr<HostTensor> result =
      (group->*collective)(call.interp.options().rank, call.in(0), error);
  if (failed(result)) {
    call.error() << "rank " << call.interp.options().rank << ": " << error;
    return failure();
  }
  return single(std::move(*result));
}

Results allReduce(OpCall &call) {
  return collective<AllReduceOp>(call, &RankGroup::allReduceSum);
}

Results allGather(OpCall &call) {
  return collective<AllGatherOp>(call, &RankGroup::allGather);
}

} // namespace

void cgc::interp::registerParallelKernels(KernelTable &table) {
  addKernel<ShardOp>(table, shard);
  addKernel<AllReduceOp>(table, allReduce);
  addKernel<AllGatherOp>(table, allGather);
}
