// task_records: a task's state is a domain::TaskState; a stored task body
// whose state is not one of its words reads back as data_loss naming the
// table and the task.
#include "store/task_records.h"

#include <gtest/gtest.h>

namespace telic::store {
namespace {

TaskRecord Task(domain::TaskState state) {
  TaskRecord task;
  task.task_id = "t1";
  task.name = "build";
  task.state = state;
  task.created_at = task.updated_at = "2026-12-01T00:00:00.000Z";
  return task;
}

// covers issue 41 item 2
TEST(TaskRecordsTest, EveryStateRoundTripsThroughTheStoredBody) {
  for (domain::TaskState state : domain::AllTaskStates()) {
    auto read = TaskFromStored(StoredTaskBody(Task(state)), 7);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_EQ(read->state, state);
    EXPECT_EQ(read->seq, 7);
  }
}

// covers issue 41 item 2
TEST(TaskRecordsTest, AnUnknownStoredStateIsDataLossWithTableAndKey) {
  Json body = TaskToJson(Task(domain::TaskState::kReady));
  body["state"] = "paused";
  auto read = TaskFromStored(body.dump(), 1);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(read.error().message().find("graph_tasks row t1: state is not readable"), std::string::npos)
      << read.error().message();
}

}  // namespace
}  // namespace telic::store
