// W3C trace context validation and the per-thread request scope (issue 20 item 6).
#include "store/trace_context.h"

#include <thread>

#include <gtest/gtest.h>

namespace telic::store {
namespace {

constexpr const char* kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContextTest, AcceptsW3cTraceparents) {
  EXPECT_TRUE(IsValidTraceparent(kValid));
  EXPECT_TRUE(IsValidTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
  // A later version may append fields after a dash; version ff is invalid.
  EXPECT_TRUE(IsValidTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  EXPECT_TRUE(IsValidTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds"));
}

TEST(TraceContextTest, RefusesMalformedTraceparents) {
  for (const char* bad : {
           "",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",          // no flags
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",       // uppercase
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",       // all-zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",       // all-zero parent id
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // forbidden version
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", // version 00 is exactly 55
           "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01xextra", // a later version needs a dash
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // separator
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",       // not hex
           " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",      // padding
       }) {
    EXPECT_FALSE(IsValidTraceparent(bad)) << bad;
  }
  EXPECT_FALSE(IsValidTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-" + std::string(300, 'a')));
}

TEST(TraceContextTest, ValidatesTracestateLists) {
  EXPECT_TRUE(IsValidTracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
  EXPECT_TRUE(IsValidTracestate("fw529a3039@dt=ZmFzdA, ,  a_b-c*d/e=1 "));
  EXPECT_TRUE(IsValidTracestate(""));
  EXPECT_FALSE(IsValidTracestate("Rojo=1"));        // uppercase key
  EXPECT_FALSE(IsValidTracestate("rojo"));          // no value
  EXPECT_FALSE(IsValidTracestate("rojo=a=b"));      // '=' in a value
  EXPECT_FALSE(IsValidTracestate("rojo=\x01"));     // control character
  EXPECT_FALSE(IsValidTracestate("a@B=1"));         // system must start lowercase
  EXPECT_FALSE(IsValidTracestate(std::string(513, 'a')));
  std::string many;
  for (int i = 0; i < 33; ++i) many += (many.empty() ? "k" : ",k") + std::to_string(i) + "=v";
  EXPECT_FALSE(IsValidTracestate(many));  // more than 32 members
}

TEST(TraceContextTest, ScopesNestPerThreadAndStampEvents) {
  EXPECT_FALSE(CurrentTraceContext().has_value());
  TraceEventRecord untraced;
  StampTraceContext(untraced);
  EXPECT_FALSE(untraced.traceparent.has_value());
  {
    TraceContextScope outer(TraceContext{kValid, "rojo=1"});
    TraceEventRecord event;
    StampTraceContext(event);
    EXPECT_EQ(event.traceparent, kValid);
    EXPECT_EQ(event.tracestate, "rojo=1");
    {
      TraceContextScope inner(std::nullopt);
      EXPECT_FALSE(CurrentTraceContext().has_value());
    }
    EXPECT_EQ(CurrentTraceContext()->traceparent, kValid);
    std::thread other([] { EXPECT_FALSE(CurrentTraceContext().has_value()); });
    other.join();
    TraceEventRecord explicit_context;
    explicit_context.traceparent = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    StampTraceContext(explicit_context);
    EXPECT_EQ(explicit_context.traceparent, "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  }
  EXPECT_FALSE(CurrentTraceContext().has_value());
}

}  // namespace
}  // namespace telic::store
