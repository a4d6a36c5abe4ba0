// Time and randomness are injected so the controller stays deterministic in tests.
#pragma once

#include <cstdint>
#include <string>

namespace telic {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t NowMillis() = 0;
};

// The real wall clock.
class SystemClock final : public Clock {
 public:
  int64_t NowMillis() override;
};

// A clock tests set by hand; each read advances it by `step_ms`.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms, int64_t step_ms = 0) : now_(start_ms), step_(step_ms) {}
  int64_t NowMillis() override {
    int64_t value = now_;
    now_ += step_;
    return value;
  }
  void Set(int64_t ms) { now_ = ms; }

 private:
  int64_t now_;
  int64_t step_;
};

// ISO-8601 UTC with milliseconds: 2026-12-02T08:15:53.310Z.
std::string FormatIsoMillis(int64_t epoch_ms);

}  // namespace telic
