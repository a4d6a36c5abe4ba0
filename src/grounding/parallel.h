// A small fork-join helper for CPU-bound loops over independent items.
#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace telic::grounding {

// Calls body(begin, end) over [0, n) split into contiguous ranges, one per
// core (at most 8), each at least `min_per_thread` items; the last range runs
// on the calling thread. `body` must only touch what its range owns. If a
// thread cannot be started, its range runs on the calling thread instead.
template <typename Body>
void ParallelFor(size_t n, size_t min_per_thread, const Body& body) {
  size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 8);
  threads = std::max<size_t>(1, std::min(threads, n / std::max<size_t>(min_per_thread, 1)));
  const size_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> workers;
  size_t begin = 0;
  for (size_t t = 1; t < threads; ++t) {
    try {
      workers.emplace_back([&body, begin, end = std::min(n, begin + chunk)] { body(begin, end); });
    } catch (const std::system_error&) {
      break;
    }
    begin = std::min(n, begin + chunk);
  }
  body(begin, n);
  for (std::thread& worker : workers) worker.join();
}

}  // namespace telic::grounding
