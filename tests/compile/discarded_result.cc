// Must not compile cleanly: a fallible call's Result is dropped. CTest
// (build.results_must_be_used) passes when the compiler names the ignored
// Result, so [[nodiscard]] on telic::Result cannot quietly disappear.
#include "base/status.h"

telic::Status MightFail();
telic::Result<int> MightCount();

void DropsBoth() {
  MightFail();
  MightCount();
}
