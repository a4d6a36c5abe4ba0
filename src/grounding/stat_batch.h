// lstat of many names in one folder, batched through io_uring.
//
// The work-tree scan stats every tracked file: 100,000 fstatat calls for the
// bench repository, most of the scan's time, and on virtual machines most of
// each call is the system-call round trip itself. io_uring (liburing) submits
// a folder's statx requests in one call and waits for all of them with one
// more: `telic ground` on bench/grounding_bench.sh's 100,000-file repository
// went from 202-226 ms to 172-181 ms on the 2-core bench machine
// (docs/GROUNDING.md). Where io_uring is unavailable (kernels before 5.1,
// kernel.io_uring_disabled, seccomp profiles that refuse io_uring_setup) the
// batch falls back to one fstatat per name, with the same results; so does
// a kernel whose io_uring lacks statx (5.1-5.5), found by probing the ring.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace telic::grounding {

struct NameStat {
  bool ok = false;  // false: the name could not be stat'ed (gone, not a directory, no access)
  struct stat info {};  // when ok: st_mode, st_size, st_ino, st_dev, st_uid, st_gid, st_mtim, st_ctim
};

// How a StatBatch stats names.
enum class StatMode {
  kDirect,   // one fstatat per name
  kRing,     // io_uring where the kernel allows it (else fstatat)
  kFastest,  // times both on its first names (kTrialNames each), then keeps
             // the faster one: io_uring pays where system calls are dear (the
             // 2-core bench VM of issue 6: 15% faster), fstatat where they are
             // cheap (a later bench machine: 25-40% faster, D-P12)
};

class StatBatch {
 public:
  static constexpr size_t kTrialNames = 256;

  // kRing and kFastest use fstatat where the kernel refuses a ring.
  explicit StatBatch(StatMode mode);
  // true: kRing, false: kDirect.
  explicit StatBatch(bool use_io_uring) : StatBatch(use_io_uring ? StatMode::kRing : StatMode::kDirect) {}
  ~StatBatch();
  StatBatch(const StatBatch&) = delete;
  StatBatch& operator=(const StatBatch&) = delete;

  // Whether requests go through io_uring: in kFastest, once the trial has
  // reached its io_uring half, and after it only when io_uring was the faster.
  bool batched() const;
  // kFastest: whether the trial is still running.
  bool deciding() const { return trial_ != nullptr; }

  // results[i] = lstat of names[i] relative to `dir_fd` (fstatat with
  // AT_SYMLINK_NOFOLLOW semantics). `names` must stay valid until it returns.
  void Stat(int dir_fd, const std::vector<const char*>& names, std::vector<NameStat>& results);

 private:
  struct Ring;
  struct Trial;
  // results[i] for names[i] through the ring (and fstatat where it fails).
  void StatThroughRing(int dir_fd, const std::vector<const char*>& names, std::vector<NameStat>& results);
  // One step of the kFastest trial: a batch by the mode whose sample is
  // short, timed; at the end the slower mode is dropped.
  void StatOnTrial(int dir_fd, const std::vector<const char*>& names, std::vector<NameStat>& results);
  std::unique_ptr<Ring> ring_;
  std::unique_ptr<Trial> trial_;
};

}  // namespace telic::grounding
