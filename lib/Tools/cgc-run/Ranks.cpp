//===- Ranks.cpp - cgc-run's ranks: one process a GPU ---------------------===//

#include "cgc/Tools/cgc-run/Ranks.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cgcrun {
namespace {

int fail(int rank, const std::string &message) {
  std::fprintf(stderr, "cgc-run: rank %d: error: %s\n", rank, message.c_str());
  return 1;
}

struct StatusFree {
  void operator()(cgrt_status_t *status) const { cgrt_status_free(status); }
};
using StatusPtr = std::unique_ptr<cgrt_status_t, StatusFree>;

/// Makes the rank's communicator from `id` and runs `body` with it.
int runWithComm(const RankPlace &place, const cgrt_comm_id &id,
                int64_t timeoutMs, const RankBody &body) {
  cgrt_comm *comm = nullptr;
  StatusPtr status(cgrt_comm_create(&id, place.ranks, place.rank, place.device,
                                    timeoutMs, &comm));
  if (status)
    return fail(place.rank, cgrt_status_get_message(status.get()));
  int code = body(place, comm);
  cgrt_comm_release(comm);
  return code;
}

/// Moves all `bytes` through `fd` (`write`, else read), retrying after
/// signals; false when the other end is gone.
bool transferAll(int fd, void *data, size_t bytes, bool write) {
  char *p = static_cast<char *>(data);
  while (bytes > 0) {
    ssize_t n = write ? ::write(fd, p, bytes) : ::read(fd, p, bytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

/// The pipes of a launch: rank 0 sends the id to the launcher (`fromRoot`),
/// which sends it on to every other rank (`toRank[r]`).
struct Pipes {
  int fromRoot[2] = {-1, -1};
  std::vector<int> toRankRead, toRankWrite;

  bool open(int ranks) {
    if (::pipe(fromRoot) != 0)
      return false;
    toRankRead.assign(ranks, -1);
    toRankWrite.assign(ranks, -1);
    for (int r = 1; r < ranks; ++r) {
      int fds[2];
      if (::pipe(fds) != 0)
        return false;
      toRankRead[r] = fds[0];
      toRankWrite[r] = fds[1];
    }
    return true;
  }
  /// Closes every end but those rank `keep` uses (-1: the launcher's).
  void keepOnly(int keep) {
    auto close = [](int &fd) {
      if (fd >= 0)
        ::close(fd);
      fd = -1;
    };
    if (keep != -1)
      close(fromRoot[0]);
    if (keep != 0)
      close(fromRoot[1]);
    for (size_t r = 0; r < toRankRead.size(); ++r) {
      if (static_cast<int>(r) != keep)
        close(toRankRead[r]);
      if (keep != -1)
        close(toRankWrite[r]);
    }
  }
};

/// A forked rank: gets the id (rank 0 makes it), then runs.
int rankMain(const RankPlace &place, Pipes &pipes, int64_t timeoutMs,
             const RankBody &body) {
  pipes.keepOnly(place.rank);
  cgrt_comm_id id;
  if (place.rank == 0) {
    StatusPtr status(cgrt_comm_id_create(&id));
    if (status)
      return fail(0, cgrt_status_get_message(status.get()));
    if (!transferAll(pipes.fromRoot[1], id.bytes, sizeof(id.bytes), true))
      return fail(0, "cannot send the communicator's id to the launcher");
    ::close(pipes.fromRoot[1]);
  } else if (!transferAll(pipes.toRankRead[place.rank], id.bytes,
                          sizeof(id.bytes), false)) {
    return fail(place.rank, "no communicator id came from rank 0 (it failed "
                            "before making one)");
  }
  return runWithComm(place, id, timeoutMs, body);
}

/// "exited with status 3", "was killed by signal 9 (Killed)".
std::string describeExit(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

/// Waits for every rank. After the first failure the others get `grace`
/// to end on their own (they report what they saw), then are killed.
int waitForRanks(const std::vector<pid_t> &pids,
                 std::chrono::milliseconds grace) {
  using Clock = std::chrono::steady_clock;
  std::vector<bool> running(pids.size(), true);
  size_t left = pids.size();
  int code = 0;
  bool stopping = false;
  Clock::time_point killAt;
  while (left > 0) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, stopping ? WNOHANG : 0);
    if (pid < 0 && errno == EINTR)
      continue;
    if (pid < 0)
      break;
    if (pid == 0) { // stopping, nobody ended yet
      if (Clock::now() >= killAt) {
        for (size_t r = 0; r < pids.size(); ++r)
          if (running[r])
            ::kill(pids[r], SIGKILL);
        stopping = false; // reap them blocking
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      continue;
    }
    for (size_t r = 0; r < pids.size(); ++r) {
      if (pids[r] != pid || !running[r])
        continue;
      running[r] = false;
      --left;
      bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (ok || code != 0)
        break;
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
      if (!(WIFEXITED(status) && WEXITSTATUS(status) <= 2))
        std::fprintf(stderr, "cgc-run: rank %zu %s\n", r,
                     describeExit(status).c_str());
      if (left > 0) {
        std::fprintf(stderr,
                     "cgc-run: rank %zu failed; stopping the other rank(s)\n",
                     r);
        stopping = true;
        killAt = Clock::now() + grace;
      }
    }
  }
  return code;
}

bool parseNumber(const char *text, long *value) {
  if (!text || !*text)
    return false;
  char *end = nullptr;
  errno = 0;
  *value = std::strtol(text, &end, 10);
  return errno == 0 && end && *end == '\0';
}

} // namespace

int launchRanks(int ranks, int64_t timeoutMs, const RankBody &body) {
  Pipes pipes;
  if (!pipes.open(ranks)) {
    std::fprintf(stderr, "cgc-run: error: cannot make pipes: %s\n",
                 std::strerror(errno));
    return 1;
  }
  // Children inherit unflushed output, which they would print again.
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "cgc-run: error: fork failed: %s\n",
                   std::strerror(errno));
      for (pid_t started : pids)
        ::kill(started, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      RankPlace place{r, ranks, r};
      int code = rankMain(place, pipes, timeoutMs, body);
      std::fflush(stdout);
      std::fflush(stderr);
      // Not exit(): the launcher's atexit handlers are the launcher's.
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  pipes.keepOnly(-1);
  cgrt_comm_id id;
  if (transferAll(pipes.fromRoot[0], id.bytes, sizeof(id.bytes), false))
    for (int r = 1; r < ranks; ++r)
      transferAll(pipes.toRankWrite[r], id.bytes, sizeof(id.bytes), true);
  // Closing tells a rank still waiting that no id will come.
  ::close(pipes.fromRoot[0]);
  for (int r = 1; r < ranks; ++r)
    ::close(pipes.toRankWrite[r]);
  // The others get their own timeout (they report what they saw) and two
  // seconds more, but no more than 10 s: one stuck past its timeout is
  // killed.
  return waitForRanks(pids, std::chrono::milliseconds(
                                std::min<int64_t>(timeoutMs + 2000, 10000)));
}

std::optional<RankPlace> placeFromEnvironment(std::string *error) {
  const char *worldSize = std::getenv("WORLD_SIZE");
  if (!worldSize)
    return std::nullopt;
  long ranks = 0, rank = 0, local = 0;
  if (!parseNumber(worldSize, &ranks) || ranks < 1 || ranks > 65536) {
    *error = std::string("WORLD_SIZE='") + worldSize +
             "' is not a number of ranks";
    return std::nullopt;
  }
  const char *rankText = std::getenv("RANK");
  if (!parseNumber(rankText, &rank) || rank < 0 || rank >= ranks) {
    *error = std::string("RANK='") + (rankText ? rankText : "") +
             "' is not a rank of WORLD_SIZE=" + worldSize;
    return std::nullopt;
  }
  const char *localText = std::getenv("LOCAL_RANK");
  local = rank;
  if (localText && (!parseNumber(localText, &local) || local < 0)) {
    *error = std::string("LOCAL_RANK='") + localText + "' is not a device";
    return std::nullopt;
  }
  return RankPlace{static_cast<int>(rank), static_cast<int>(ranks),
                   static_cast<int>(local)};
}

int runEnvironmentRank(const RankPlace &place, int64_t timeoutMs,
                       const RankBody &body) {
  if (!std::getenv("NCCL_COMM_ID")) {
    const char *addr = std::getenv("MASTER_ADDR");
    const char *portText = std::getenv("MASTER_PORT");
    long port = 0;
    if (!addr || !*addr || !parseNumber(portText, &port) || port < 1 ||
        port >= 65535)
      return fail(place.rank,
                  "WORLD_SIZE is set, so the ranks meet at NCCL_COMM_ID or "
                  "at MASTER_ADDR and MASTER_PORT + 1; set MASTER_ADDR and "
                  "MASTER_PORT (a port below 65535), or NCCL_COMM_ID");
    std::string where = std::string(addr) + ":" + std::to_string(port + 1);
    ::setenv("NCCL_COMM_ID", where.c_str(), 1);
  }
  cgrt_comm_id id;
  StatusPtr status(cgrt_comm_id_create(&id));
  if (status)
    return fail(place.rank, cgrt_status_get_message(status.get()));
  return runWithComm(place, id, timeoutMs, body);
}

} // namespace cgcrun
