// Clocks and the ISO-8601 timestamp form the server writes (PROTOCOL §4).
#include "base/clock.h"

#include <cctype>
#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace telic {
namespace {

// Shape check for YYYY-MM-DDTHH:MM:SS.mmmZ ('9' = any digit).
bool HasIsoShape(const std::string& text) {
  const std::string shape = "9999-99-99T99:99:99.999Z";
  if (text.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool ok = shape[i] == '9' ? std::isdigit(static_cast<unsigned char>(text[i])) != 0 : text[i] == shape[i];
    if (!ok) return false;
  }
  return true;
}

TEST(FormatIsoMillisTest, Epoch) { EXPECT_EQ(FormatIsoMillis(0), "1970-01-01T00:00:00.000Z"); }

TEST(FormatIsoMillisTest, ContractExample) {
  EXPECT_EQ(FormatIsoMillis(1796199353310), "2026-12-02T08:15:53.310Z");
}

TEST(FormatIsoMillisTest, MillisecondsArePaddedToThreeDigits) {
  EXPECT_EQ(FormatIsoMillis(1), "1970-01-01T00:00:00.001Z");
  EXPECT_EQ(FormatIsoMillis(10), "1970-01-01T00:00:00.010Z");
  EXPECT_EQ(FormatIsoMillis(999), "1970-01-01T00:00:00.999Z");
  EXPECT_EQ(FormatIsoMillis(1000), "1970-01-01T00:00:01.000Z");
  EXPECT_EQ(FormatIsoMillis(86399999), "1970-01-01T23:59:59.999Z");
  EXPECT_EQ(FormatIsoMillis(86400000), "1970-01-02T00:00:00.000Z");
}

TEST(FormatIsoMillisTest, LeapDays) {
  EXPECT_EQ(FormatIsoMillis(1709251199999), "2024-02-29T23:59:59.999Z");
  EXPECT_EQ(FormatIsoMillis(1709251200000), "2024-03-01T00:00:00.000Z");
  EXPECT_EQ(FormatIsoMillis(951782400000), "2000-02-29T00:00:00.000Z");  // divisible by 400
}

TEST(FormatIsoMillisTest, NegativeMillisecondsBeforeTheEpoch) {
  EXPECT_EQ(FormatIsoMillis(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIsoMillis(-999), "1969-12-31T23:59:59.001Z");
  EXPECT_EQ(FormatIsoMillis(-1000), "1969-12-31T23:59:59.000Z");
  EXPECT_EQ(FormatIsoMillis(-1001), "1969-12-31T23:59:58.999Z");
  EXPECT_EQ(FormatIsoMillis(-310478399995), "1960-02-29T12:00:00.005Z");  // leap day before 1970
  EXPECT_EQ(FormatIsoMillis(-2208988800000), "1900-01-01T00:00:00.000Z");
}

TEST(FormatIsoMillisTest, FourDigitYearUpperBound) {
  EXPECT_EQ(FormatIsoMillis(253402300799999), "9999-12-31T23:59:59.999Z");
}

TEST(ManualClockTest, FixedClock) {
  ManualClock clock(1234);
  EXPECT_EQ(clock.NowMillis(), 1234);
  EXPECT_EQ(clock.NowMillis(), 1234);
  clock.Set(-5);
  EXPECT_EQ(clock.NowMillis(), -5);
}

TEST(ManualClockTest, EachReadAdvancesByStep) {
  ManualClock clock(1000, 7);
  EXPECT_EQ(clock.NowMillis(), 1000);
  EXPECT_EQ(clock.NowMillis(), 1007);
  EXPECT_EQ(clock.NowMillis(), 1014);
  clock.Set(0);
  EXPECT_EQ(clock.NowMillis(), 0);
  EXPECT_EQ(clock.NowMillis(), 7);
}

TEST(SystemClockTest, ReadsTheWallClock) {
  using namespace std::chrono;
  SystemClock clock;
  int64_t before = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  int64_t now = clock.NowMillis();
  int64_t after = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
  EXPECT_TRUE(HasIsoShape(FormatIsoMillis(now))) << FormatIsoMillis(now);
}

}  // namespace
}  // namespace telic
