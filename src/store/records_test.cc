// records: the hash input of a trace event is written member by member; it
// must be, byte for byte, the canonical JSON of the event's hashed members
// (the form every stored hash was computed over).
#include "store/records.h"

#include <random>

#include <gtest/gtest.h>

#include "testing/trace_hash_oracle.h"

namespace telic::store {
namespace {

std::string RandomText(std::mt19937& random) {
  static const std::vector<std::string> pieces = {"a", "Z", " ", "\"", "\\", "\n", "\t", "\x01", "\x1f", "/",
                                                  "\xC3\xA9", "\xE2\x80\xA8", "\xF0\x9F\x98\x80", "trace://", "{}"};
  std::string text;
  for (size_t n = random() % 12; n > 0; --n) text += pieces[random() % pieces.size()];
  return text;
}

TEST(TraceEventHashInputTest, IsTheCanonicalJsonOfTheHashedMembers) {
  std::mt19937 random(73);
  for (int round = 0; round < 500; ++round) {
    TraceEventRecord e;
    e.event_id = RandomText(random);
    e.run_id = RandomText(random);
    e.sequence = round % 3 == 0 ? -static_cast<int64_t>(random()) : static_cast<int64_t>(random()) * 4096;
    e.timestamp = RandomText(random);
    e.actor = RandomText(random);
    e.phase = RandomText(random);
    e.event_type = RandomText(random);
    for (size_t n = random() % 4; n > 0; --n) e.input_refs.push_back(RandomText(random));
    for (size_t n = random() % 3; n > 0; --n) e.output_refs.push_back(RandomText(random));
    if (round % 4 == 1) e.permission_decision = Json{{"decision", RandomText(random)}, {"z", {1, 2.5, nullptr}}};
    if (round % 4 == 2) e.permission_decision = Json(nullptr);
    e.summary = RandomText(random);
    e.budget_snapshot = round % 2 ? Json{{"promptRevisions", 1}, {"\xC3\xA9", "x"}, {"a", Json::array()}}
                                  : Json::object();
    if (round % 3 == 1) e.redactions = Json::array({Json{{"field", "/summary"}, {"category", "secret"}}});
    e.prev_hash = round % 5 ? "sha256:" + RandomText(random) : "";
    e.hash = "ignored";
    e.traceparent = "ignored";
    ASSERT_EQ(TraceEventHashInput(e), testing::TraceEventHashInputOfTree(e)) << "round " << round;
  }
}

}  // namespace
}  // namespace telic::store
