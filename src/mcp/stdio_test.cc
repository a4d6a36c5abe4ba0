// WriteLine: one whole line per call, through partial writes and signals.
#include "mcp/stdio.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace telic::mcp {
namespace {

void IgnoreSignal(int) {}

TEST(StdioWriteLineTest, AWholeLineArrivesThroughAFullPipeAndInterruptedWrites) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  (void)::fcntl(fds[1], F_SETPIPE_SZ, 4096);  // many partial writes for a 1 MB line
  std::FILE* out = ::fdopen(fds[1], "w");
  ASSERT_NE(out, nullptr);
  // The writer's signal interrupts writev (no SA_RESTART, as ServeStdio's handlers).
  struct sigaction action {}, previous {};
  action.sa_handler = IgnoreSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ASSERT_EQ(::sigaction(SIGUSR1, &action, &previous), 0);

  std::string line(1 << 20, 'x');
  for (size_t i = 0; i < line.size(); i += 997) line[i] = static_cast<char>('a' + i % 26);
  std::atomic<bool> done{false};
  pthread_t writer_handle{};
  std::atomic<bool> started{false};
  std::thread writer([&] {
    writer_handle = ::pthread_self();
    started = true;
    WriteLine(out, line);
    WriteLine(out, "second");
    done = true;
  });
  while (!started) std::this_thread::yield();
  std::string received;
  char buffer[1500];
  int signals = 0;
  while (received.size() < line.size() + 8) {
    if (!done && signals < 200) {
      ::pthread_kill(writer_handle, SIGUSR1);
      ++signals;
    }
    pollfd ready{fds[0], POLLIN, 0};
    if (::poll(&ready, 1, 5000) != 1) {  // a writer that gave up leaves the line cut short
      ::pthread_kill(writer_handle, SIGUSR1);
      writer.join();
      ::sigaction(SIGUSR1, &previous, nullptr);
      FAIL() << "the line stopped after " << received.size() << " of " << line.size() + 8 << " bytes";
    }
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    ASSERT_GT(n, 0);
    received.append(buffer, static_cast<size_t>(n));
  }
  writer.join();
  ::sigaction(SIGUSR1, &previous, nullptr);
  std::fclose(out);
  ::close(fds[0]);
  EXPECT_GT(signals, 10);
  ASSERT_EQ(received.size(), line.size() + 8);
  EXPECT_TRUE(received.compare(0, line.size(), line) == 0) << "the long line arrived changed";
  EXPECT_EQ(received.substr(line.size()), "\nsecond\n");
}

TEST(StdioWriteLineTest, AStreamWithoutADescriptorGetsTheLineToo) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = ::open_memstream(&data, &size);
  ASSERT_NE(out, nullptr);
  WriteLine(out, "{\"id\":1}");
  WriteLine(out, "{\"id\":2}");
  std::fclose(out);
  EXPECT_EQ(std::string(data, size), "{\"id\":1}\n{\"id\":2}\n");
  std::free(data);
}

}  // namespace
}  // namespace telic::mcp
