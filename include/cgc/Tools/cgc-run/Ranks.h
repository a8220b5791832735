//===- Ranks.h - cgc-run's ranks: one process a GPU -------------*- C++ -*-===//
//
// A package split over several GPUs runs as one process per rank, each
// with a communicator of its rank. cgc-run starts them itself on one host
// (`--ranks N`: a process per GPU, the communicator's id passed through
// pipes), or is one of them, started by a launcher that sets torchrun's
// environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT).
//
//===----------------------------------------------------------------------===//

#ifndef CGC_TOOLS_CGC_RUN_RANKS_H
#define CGC_TOOLS_CGC_RUN_RANKS_H

#include "cgrt/cgrt.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cgcrun {

/// Where this process stands among the ranks.
struct RankPlace {
  int rank = 0, ranks = 1, device = 0;
};

/// What a rank runs once its communicator is made: returns its exit code.
using RankBody = std::function<int(const RankPlace &, cgrt_comm *)>;

/// `--ranks N`: forks a process per rank (rank r on device r), makes their
/// communicator and runs `body` in each. When a rank fails or dies, the
/// others are given their timeout and 2 s more (at most 10 s) to report
/// what they saw, then killed. Returns 0 when every rank returned 0, else the first failing
/// rank's code (1 for a rank that was killed).
int launchRanks(int ranks, int64_t timeoutMs, const RankBody &body);

/// The place torchrun's variables give (WORLD_SIZE set), or none. A
/// malformed or inconsistent value is an `error`.
std::optional<RankPlace> placeFromEnvironment(std::string *error);

/// Runs `body` as the rank at `place`: every rank makes the communicator's
/// id itself from NCCL_COMM_ID, which defaults to MASTER_ADDR and the port
/// after MASTER_PORT (torchrun's own store holds MASTER_PORT).
int runEnvironmentRank(const RankPlace &place, int64_t timeoutMs,
                       const RankBody &body);

} // namespace cgcrun

#endif // CGC_TOOLS_CGC_RUN_RANKS_H
