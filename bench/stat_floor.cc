// The "stat pass alone" row of bench/grounding_bench.sh (issue 18 target 7):
// the one pass `telic ground` cannot skip, by itself. The dirty-work-tree fingerprint
// needs every tracked file's stat data (as `git status` does), and
// `git ls-files`, the target's yardstick, reads the index only.
//
// Usage: telic_stat_floor ROOT [THREADS] < paths
//   paths: NUL-separated repository paths (`git ls-files -z`), folders
//   contiguous. Each folder is opened once and its files are stat'ed
//   relative to it (lstat semantics) with grounding's own StatBatch
//   (src/grounding/stat_batch.h) in the mode `telic ground` uses: each
//   thread times fstatat and io_uring batches on its first names and keeps
//   the faster (FLOOR_MODE=direct or FLOOR_FSTATAT=1 forces fstatat,
//   FLOOR_MODE=ring io_uring where available). Folders are shared out over THREADS threads (default: one per
//   core). Prints "<found> <missing>".
// Nothing else: no index, no ignore rules, no ranking, no output.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "grounding/stat_batch.h"

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

// All of `fd`, read in large blocks: reading the ~1 MB list a character at a
// time (std::istreambuf_iterator on std::cin) took a quarter of the run.
std::string ReadAll(int fd) {
  std::string data;
  char block[1 << 16];
  for (;;) {
    const ssize_t got = read(fd, block, sizeof block);
    if (got > 0) {
      data.append(block, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      return data;
    }
  }
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
  const std::string input = ReadAll(STDIN_FILENO);
  const std::vector<Folder> folders = ReadFolders(input);
  // FLOOR_MODE=direct|ring|fastest (default fastest, as `telic ground`);
  // FLOOR_FSTATAT=1 is FLOOR_MODE=direct.
  telic::grounding::StatMode mode = telic::grounding::StatMode::kFastest;
  const char* requested = std::getenv("FLOOR_MODE");
  const std::string_view mode_name = requested ? requested : "";
  if (std::getenv("FLOOR_FSTATAT") != nullptr || mode_name == "direct") mode = telic::grounding::StatMode::kDirect;
  if (mode_name == "ring") mode = telic::grounding::StatMode::kRing;

  std::atomic<size_t> next{0};
  std::atomic<long> found{0};
  std::atomic<long> missing{0};
  auto work = [&] {
    telic::grounding::StatBatch batch(mode);
    std::vector<const char*> names;
    std::vector<telic::grounding::NameStat> results;
    for (size_t i = next++; i < folders.size(); i = next++) {
      const std::string dir = folders[i].path.empty() ? root : root + "/" + folders[i].path;
      const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      long ok = 0;
      if (fd >= 0) {
        names.clear();
        for (const std::string& name : folders[i].names) names.push_back(name.c_str());
        batch.Stat(fd, names, results);
        for (const auto& result : results) ok += result.ok;
        close(fd);
      }
      found += ok;
      missing += static_cast<long>(folders[i].names.size()) - ok;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  std::printf("%ld %ld\n", found.load(), missing.load());
  return 0;
}
