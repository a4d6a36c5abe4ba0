// phases: the phase table has one row per domain::Phase, in its order, and
// every phase accepts its required output type first.
#include "controller/phases.h"

#include <gtest/gtest.h>

namespace telic::controller {
namespace {

// covers issue 41 item 2
TEST(PhasesTest, EveryPhaseHasItsOwnRow) {
  for (domain::Phase phase : domain::AllPhases()) {
    const PhaseInfo& info = FindPhase(phase);
    EXPECT_EQ(info.phase, phase) << domain::Name(phase);
    EXPECT_FALSE(info.accepted_types.empty()) << domain::Name(phase);
    EXPECT_FALSE(info.role.empty()) << domain::Name(phase);
  }
}

// covers issue 41 item 2: trace events keep their phase as text, so the
// wire name is looked up from it; text that is no phase stays as it is.
TEST(PhasesTest, ProtocolNamesOfTextAndOfEnumsAgree) {
  for (domain::Phase phase : domain::AllPhases()) {
    EXPECT_EQ(ProtocolPhaseName(domain::Name(phase)), ProtocolPhaseName(phase));
  }
  EXPECT_EQ(ProtocolPhaseName(domain::Phase::kAgent5Report), "user_report");
  EXPECT_EQ(ProtocolPhaseName("not_a_phase"), "not_a_phase");
}

}  // namespace
}  // namespace telic::controller
