// The connection layer: request framing, and the reactor's deadlines, cap
// and hand-over, driven over socket pairs with short limits.
#include "mcp/http_connections.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

namespace telic::mcp {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;  // not "Clock": base/clock.h names one (unity builds)

TEST(FrameRequestTest, FindsTheBodyLengthOrHandsOver) {
  EXPECT_EQ(FrameRequest("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 100).body_bytes, 0u);
  Framing post = FrameRequest("POST / HTTP/1.1\r\ncontent-LENGTH:  42 \r\n\r\n", 100);
  EXPECT_EQ(post.kind, Framing::kLength);
  EXPECT_EQ(post.body_bytes, 42u);
  for (const char* head : {"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n",
                           "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
                           "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                           "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
                           "POST / HTTP/1.1\r\nContent-Length: 99999999999999999\r\n\r\n",
                           "POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\n",
                           "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"}) {
    EXPECT_EQ(FrameRequest(head, 100).kind, Framing::kHandOver) << head;
  }
}

// A reactor whose dispatched connections are collected by the test.
class ReactorTest : public ::testing::Test {
 protected:
  void Start(ConnectionLimits limits) {
    reactor_ = std::make_unique<ConnectionReactor>(limits, [this](std::unique_ptr<HttpConnection>& c) {
      if (refuse_) return false;
      std::lock_guard lock(mutex_);
      dispatched_.push_back(std::move(c));
      return true;
    });
    ASSERT_TRUE(reactor_->Start());
  }
  void TearDown() override {
    if (reactor_) reactor_->Stop();
    for (int fd : clients_) ::close(fd);
    for (auto& c : dispatched_) ::close(c->fd);
  }
  // A connected pair: the reactor adopts one end; returns the client's.
  int Connect() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    reactor_->Adopt(fds[0]);
    clients_.push_back(fds[1]);
    return fds[1];
  }
  size_t Dispatched() {
    std::lock_guard lock(mutex_);
    return dispatched_.size();
  }
  bool WaitFor(const std::function<bool()>& done, milliseconds limit = milliseconds(3000)) {
    auto end = Steady::now() + limit;
    while (Steady::now() < end) {
      if (done()) return true;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return done();
  }
  // Everything the server sends until it closes (at most `limit`).
  static std::string ReadUntilClosed(int fd, milliseconds limit = milliseconds(5000)) {
    std::string out;
    auto end = Steady::now() + limit;
    while (Steady::now() < end) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buffer[4096];
      ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) return out;
      out.append(buffer, static_cast<size_t>(n));
    }
    return out + "<still open>";
  }
  static void Send(int fd, std::string_view data) {
    ASSERT_EQ(::send(fd, data.data(), data.size(), MSG_NOSIGNAL), static_cast<ssize_t>(data.size()));
  }

  std::unique_ptr<ConnectionReactor> reactor_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<HttpConnection>> dispatched_;
  std::vector<int> clients_;
  std::atomic<bool> refuse_{false};
};

TEST_F(ReactorTest, OnlyAWholeRequestReachesAWorker) {
  Start({});
  int client = Connect();
  Send(client, "POST /mcp HTTP/1.1\r\nContent-Length: 4\r\n\r\nab");
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(Dispatched(), 0u);
  Send(client, "cdGET /next");  // the body's end, then the start of a pipelined request
  ASSERT_TRUE(WaitFor([&] { return Dispatched() == 1; }));
  // A body is read only up to its length: the next request stays in the socket.
  EXPECT_EQ(dispatched_[0]->input, "POST /mcp HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd");
}

TEST_F(ReactorTest, AResumedConnectionWithAWholeRequestIsDispatchedAtOnce) {
  Start({});
  int client = Connect();
  Send(client, "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(WaitFor([&] { return Dispatched() == 1; }));
  std::unique_ptr<HttpConnection> connection;
  {
    std::lock_guard lock(mutex_);
    connection = std::move(dispatched_[0]);
    dispatched_.clear();
  }
  connection->input.erase(0, std::string_view("GET /a HTTP/1.1\r\n\r\n").size());
  reactor_->Resume(std::move(connection));
  ASSERT_TRUE(WaitFor([&] { return Dispatched() == 1; }));
  EXPECT_EQ(dispatched_[0]->input, "GET /b HTTP/1.1\r\n\r\n");
}

TEST_F(ReactorTest, TheHeadDeadlineIsTotalNotPerRead) {
  ConnectionLimits limits;
  limits.head_timeout_ms = 400;
  Start(limits);
  int client = Connect();
  auto started = Steady::now();
  std::atomic<bool> stop{false};
  std::thread drip([&] {  // one byte every 50 ms: each read is prompt, the head never ends
    for (int i = 0; i < 40 && !stop; ++i) {
      if (::send(client, "a", 1, MSG_NOSIGNAL) != 1) return;
      std::this_thread::sleep_for(milliseconds(50));
    }
  });
  std::string answer = ReadUntilClosed(client);
  auto took = Steady::now() - started;
  stop = true;
  drip.join();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 408 ")) << answer;
  EXPECT_GE(took, milliseconds(350));
  EXPECT_LT(took, milliseconds(1500));
  EXPECT_EQ(Dispatched(), 0u);
}

TEST_F(ReactorTest, TheBodyDeadlineIsTotalNotPerRead) {
  ConnectionLimits limits;
  limits.body_timeout_ms = 400;
  Start(limits);
  int client = Connect();
  Send(client, "POST /mcp HTTP/1.1\r\nContent-Length: 1000\r\n\r\n");
  auto started = Steady::now();
  std::atomic<bool> stop{false};
  std::thread drip([&] {
    for (int i = 0; i < 40 && !stop; ++i) {
      if (::send(client, "b", 1, MSG_NOSIGNAL) != 1) return;
      std::this_thread::sleep_for(milliseconds(50));
    }
  });
  std::string answer = ReadUntilClosed(client);
  auto took = Steady::now() - started;
  stop = true;
  drip.join();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 408 ")) << answer;
  EXPECT_LT(took, milliseconds(1500));
  EXPECT_EQ(Dispatched(), 0u);
}

TEST_F(ReactorTest, ASilentConnectionIsClosedWithoutAnAnswer) {
  ConnectionLimits limits;
  limits.head_timeout_ms = 200;
  Start(limits);
  int client = Connect();
  EXPECT_EQ(ReadUntilClosed(client, milliseconds(2000)), "");
}

TEST_F(ReactorTest, HeadsThatCannotBeFramedAreHandedOverWithoutTheirBody) {
  ConnectionLimits limits;
  limits.max_head_bytes = 64;
  limits.max_body_bytes = 10;
  Start(limits);
  Send(Connect(), "POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n");
  Send(Connect(), "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  Send(Connect(), "GET / HTTP/1.1\r\n" + std::string(100, 'x'));  // no end of head, over the cap
  EXPECT_TRUE(WaitFor([&] { return Dispatched() == 3; }));
}

TEST_F(ReactorTest, AtTheCapTheLongestWaitingConnectionMakesRoom) {
  ConnectionLimits limits;
  limits.max_connections = 2;
  Start(limits);
  int first = Connect();
  Send(first, "GET / HT");
  std::this_thread::sleep_for(milliseconds(20));
  int second = Connect();
  std::this_thread::sleep_for(milliseconds(20));
  ASSERT_TRUE(WaitFor([&] { return reactor_->waiting() == 2; }));
  int third = Connect();
  EXPECT_TRUE(ReadUntilClosed(first, milliseconds(2000)).starts_with("HTTP/1.1 408 "));
  Send(second, "GET / HTTP/1.1\r\n\r\n");
  Send(third, "GET / HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(WaitFor([&] { return Dispatched() == 2; }));
}

TEST_F(ReactorTest, WithNoWorkerFreeTheRequestIsAnswered503) {
  Start({});
  refuse_ = true;
  int client = Connect();
  Send(client, "GET / HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(ReadUntilClosed(client).starts_with("HTTP/1.1 503 "));
}

TEST_F(ReactorTest, StopClosesWaitingConnections) {
  Start({});
  int client = Connect();
  ASSERT_TRUE(WaitFor([&] { return reactor_->waiting() == 1; }));
  reactor_->Stop();
  EXPECT_EQ(ReadUntilClosed(client, milliseconds(2000)), "");
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  reactor_->Adopt(fds[0]);  // after Stop: closed at once
  EXPECT_EQ(ReadUntilClosed(fds[1], milliseconds(2000)), "");
  ::close(fds[1]);
}

}  // namespace
}  // namespace telic::mcp
