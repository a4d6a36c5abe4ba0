// The "stat pass alone" row of bench/grounding_bench.sh (issue 18 target 7):
// the one pass `telic ground` cannot skip, by itself. The dirty-work-tree fingerprint
// needs every tracked file's stat data (as `git status` does), and
// `git ls-files`, the target's yardstick, reads the index only.
//
// Usage: telic_stat_floor ROOT [THREADS] < paths
//   paths: NUL-separated repository paths (`git ls-files -z`), folders
//   contiguous. Each folder is opened once and its files are stat'ed
//   relative to it (lstat semantics) in one io_uring batch of statx
//   requests, the fastest way measured on the bench machine (as telic's
//   scan does, src/grounding/stat_batch.h); FLOOR_FSTATAT=1 makes one fstatat
//   call per file instead. Folders are shared out over THREADS threads
//   (default: one per core). Prints "<found> <missing>".
// Nothing else: no index, no ignore rules, no ranking, no output.
#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

struct Folder {
  std::string path;                // "" for the top
  std::vector<std::string> names;  // files directly in it
};

std::vector<Folder> ReadFolders(std::string_view input) {
  std::vector<Folder> folders;
  while (!input.empty()) {
    const size_t end = input.find('\0');
    std::string_view path = input.substr(0, end);
    input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
    if (path.empty()) continue;
    const size_t slash = path.rfind('/');
    std::string_view folder = slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
    if (folders.empty() || folders.back().path != folder) folders.push_back(Folder{std::string(folder), {}});
    folders.back().names.emplace_back(slash == std::string_view::npos ? path : path.substr(slash + 1));
  }
  return folders;
}

// Stats `names` in `fd` through `ring` in batches of up to `entries`; the
// number found, or -1 when the ring failed (the caller then stops using it
// and stats the folder with fstatat; `buffers` outlive the ring).
long StatBatched(io_uring* ring, unsigned entries, int fd, const std::vector<std::string>& names,
                 std::vector<struct statx>& buffers) {
  long ok = 0;
  for (size_t done = 0; done < names.size();) {
    unsigned queued = 0;
    for (; queued < entries && done + queued < names.size(); ++queued) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (sqe == nullptr) break;
      io_uring_prep_statx(sqe, fd, names[done + queued].c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
                          &buffers[queued]);
    }
    // One system call submits the batch and waits for all of it.
    const int submitted = io_uring_submit_and_wait(ring, queued);
    if (submitted != static_cast<int>(queued)) return -1;
    for (unsigned reaped = 0; reaped < queued;) {
      io_uring_cqe* cqe = nullptr;
      const int waited = io_uring_wait_cqe(ring, &cqe);  // already there, unless interrupted
      if (waited == -EINTR) continue;
      if (waited != 0) return -1;
      ok += cqe->res == 0;
      io_uring_cqe_seen(ring, cqe);
      ++reaped;
    }
    done += queued;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: telic_stat_floor ROOT [THREADS] < paths (NUL-separated)\n", stderr);
    return 2;
  }
  const std::string root = argv[1];
  unsigned threads = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;
  const std::string input(std::istreambuf_iterator<char>(std::cin), {});
  const std::vector<Folder> folders = ReadFolders(input);

  std::atomic<size_t> next{0};
  std::atomic<long> found{0};
  std::atomic<long> missing{0};
  const bool plain = std::getenv("FLOOR_FSTATAT") != nullptr;
  constexpr unsigned kEntries = 256;
  auto work = [&] {
    io_uring ring;
    bool batched = !plain && io_uring_queue_init(kEntries, &ring, 0) == 0;
    std::vector<struct statx> buffers(kEntries);
    struct stat info;
    for (size_t i = next++; i < folders.size(); i = next++) {
      const std::string dir = folders[i].path.empty() ? root : root + "/" + folders[i].path;
      const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      long ok = fd >= 0 && batched ? StatBatched(&ring, kEntries, fd, folders[i].names, buffers) : -1;
      if (ok < 0) {
        batched = false;
        ok = 0;
        for (const std::string& name : folders[i].names) {
          ok += fd >= 0 && fstatat(fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0;
        }
      }
      if (fd >= 0) close(fd);
      found += ok;
      missing += static_cast<long>(folders[i].names.size()) - ok;
    }
    if (batched) io_uring_queue_exit(&ring);  // a failed ring is left as it is
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  std::printf("%ld %ld\n", found.load(), missing.load());
  return 0;
}
