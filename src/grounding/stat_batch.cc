#include "grounding/stat_batch.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdint>

namespace telic::grounding {
namespace {

// Requests in flight per submission (and the ring's size).
constexpr unsigned kRingEntries = 256;
constexpr unsigned kNeeded = STATX_TYPE | STATX_MODE | STATX_INO | STATX_UID | STATX_GID | STATX_SIZE |
                             STATX_MTIME | STATX_CTIME;

NameStat StatOne(int dir_fd, const char* name) {
  NameStat out;
  out.ok = fstatat(dir_fd, name, &out.info, AT_SYMLINK_NOFOLLOW) == 0;
  return out;
}

NameStat FromStatx(const struct statx& x) {
  NameStat out;
  out.ok = true;
  out.info.st_mode = x.stx_mode;
  out.info.st_size = static_cast<off_t>(x.stx_size);
  out.info.st_ino = x.stx_ino;
  out.info.st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
  out.info.st_uid = x.stx_uid;
  out.info.st_gid = x.stx_gid;
  out.info.st_nlink = x.stx_nlink;
  out.info.st_mtim = {x.stx_mtime.tv_sec, static_cast<long>(x.stx_mtime.tv_nsec)};
  out.info.st_ctim = {x.stx_ctime.tv_sec, static_cast<long>(x.stx_ctime.tv_nsec)};
  return out;
}

}  // namespace

struct StatBatch::Ring {
  io_uring ring{};
  bool live = false;  // set up (io_uring_queue_exit only undoes a ring that was)
  std::vector<struct statx> buffers = std::vector<struct statx>(kRingEntries);
  ~Ring() {
    if (live) io_uring_queue_exit(&ring);
  }
};

namespace {

// Whether the ring's kernel runs IORING_OP_STATX (5.6+; a 5.1-5.5 ring
// would fail every request).
bool SupportsStatx(io_uring* ring) {
  io_uring_probe* probe = io_uring_get_probe_ring(ring);
  if (probe == nullptr) return false;
  const bool supported = io_uring_opcode_supported(probe, IORING_OP_STATX) != 0;
  io_uring_free_probe(probe);
  return supported;
}

}  // namespace

// Names stat'ed and nanoseconds spent, per mode, during a kFastest trial.
struct StatBatch::Trial {
  size_t direct_names = 0;
  int64_t direct_ns = 0;
  size_t ring_names = 0;
  int64_t ring_ns = 0;
};

StatBatch::StatBatch(StatMode mode) {
  if (mode == StatMode::kDirect) return;
  auto ring = std::make_unique<Ring>();
  ring->live = io_uring_queue_init(kRingEntries, &ring->ring, 0) == 0;
  if (ring->live && SupportsStatx(&ring->ring)) ring_ = std::move(ring);
  if (ring_ && mode == StatMode::kFastest) trial_ = std::make_unique<Trial>();
}

StatBatch::~StatBatch() = default;

bool StatBatch::batched() const { return ring_ != nullptr && (!trial_ || trial_->direct_names >= kTrialNames); }

void StatBatch::Stat(int dir_fd, const std::vector<const char*>& names, std::vector<NameStat>& results) {
  if (trial_ && !ring_) trial_.reset();  // the ring failed during the trial: fstatat from now on
  if (trial_ && !names.empty()) {
    StatOnTrial(dir_fd, names, results);
    return;
  }
  StatThroughRing(dir_fd, names, results);
}

void StatBatch::StatOnTrial(int dir_fd, const std::vector<const char*>& names, std::vector<NameStat>& results) {
  const bool by_ring = trial_->direct_names >= kTrialNames;
  const auto start = std::chrono::steady_clock::now();
  if (by_ring) {
    StatThroughRing(dir_fd, names, results);
  } else {
    results.resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) results[i] = StatOne(dir_fd, names[i]);
  }
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  (by_ring ? trial_->ring_names : trial_->direct_names) += names.size();
  (by_ring ? trial_->ring_ns : trial_->direct_ns) += ns;
  if (trial_->ring_names < kTrialNames) return;
  // Per name: ring_ns / ring_names against direct_ns / direct_names.
  const bool ring_slower = static_cast<double>(trial_->ring_ns) * static_cast<double>(trial_->direct_names) >=
                           static_cast<double>(trial_->direct_ns) * static_cast<double>(trial_->ring_names);
  if (ring_slower) ring_.reset();  // nothing in flight between calls
  trial_.reset();
}

// Size: submitting, reaping and the fall-back to fstatat share the ring's
// buffers and the in-flight accounting (a buffer is never reused before its
// request is reaped); kept in one piece so that invariant reads in one place.
void StatBatch::StatThroughRing(int dir_fd, const std::vector<const char*>& names, std::vector<NameStat>& results) {
  results.assign(names.size(), NameStat{});
  std::vector<uint8_t> answered;
  size_t done = 0;
  while (ring_ && done < names.size()) {
    io_uring* ring = &ring_->ring;
    const auto count = static_cast<unsigned>(std::min<size_t>(kRingEntries, names.size() - done));
    unsigned queued = 0;
    for (; queued < count; ++queued) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (sqe == nullptr) break;
      io_uring_prep_statx(sqe, dir_fd, names[done + queued], AT_SYMLINK_NOFOLLOW, kNeeded, &ring_->buffers[queued]);
      io_uring_sqe_set_data64(sqe, queued);
    }
    if (queued == 0) {  // the queue should be empty here; do not trust the ring
      ring_.reset();
      break;
    }
    const int submitted = io_uring_submit(ring);
    answered.assign(queued, 0);
    // Every submitted request is reaped before its buffer is reused or freed.
    bool lost = false;
    for (int reaped = 0; reaped < submitted;) {
      io_uring_cqe* cqe = nullptr;
      const int waited = io_uring_wait_cqe_nr(ring, &cqe, static_cast<unsigned>(submitted - reaped));
      if (waited == -EINTR || waited == -EAGAIN) continue;
      if (waited != 0 || cqe == nullptr) {
        lost = true;
        break;
      }
      unsigned head = 0;
      unsigned seen = 0;
      io_uring_for_each_cqe(ring, head, cqe) {
        ++seen;
        const auto slot = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
        if (slot >= queued) continue;
        answered[slot] = 1;
        const size_t i = done + slot;
        if (cqe->res == 0 && (ring_->buffers[slot].stx_mask & kNeeded) == kNeeded) {
          results[i] = FromStatx(ring_->buffers[slot]);
        } else if (cqe->res == -ENOENT || cqe->res == -ENOTDIR) {
          results[i].ok = false;
        } else {
          results[i] = StatOne(dir_fd, names[i]);  // anything else is decided by fstatat itself
        }
      }
      io_uring_cq_advance(ring, seen);
      reaped += static_cast<int>(seen);
    }
    if (lost) {
      // Requests may still be in flight and write into the ring's buffers:
      // the ring is abandoned, never freed (a should-not-happen path).
      (void)ring_.release();
    } else if (submitted != static_cast<int>(queued)) {
      ring_.reset();  // nothing in flight; the ring is not trusted again
    }
    for (unsigned slot = 0; slot < queued; ++slot) {
      if (answered[slot] == 0) results[done + slot] = StatOne(dir_fd, names[done + slot]);
    }
    done += queued;
  }
  for (; done < names.size(); ++done) results[done] = StatOne(dir_fd, names[done]);
}

}  // namespace telic::grounding
