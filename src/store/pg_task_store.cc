#include "store/pg_task_store.h"

#include <fmt/format.h>

#include "base/json_parse.h"
#include "store/pg_connection.h"
#include "store/store_rules.h"

namespace telic::store {
namespace {

// The task-change rules' reads and writes on one connection, inside the
// transaction. A statement's failure is kept (failure()) and reported to the
// rules as an error, so the caller can retry a serialization failure.
class PgTaskRows final : public TaskChangeRows {
 public:
  explicit PgTaskRows(PGconn* conn) : conn_(conn) {}
  const std::optional<PgFailure>& failure() const { return failure_; }

  Result<std::optional<int64_t>> TaskVersion(const std::string& task_id) override {
    TELIC_ASSIGN_OR_RETURN(ResultPtr row, Exec("SELECT version FROM graph_tasks WHERE task_id = $1", Params().Add(task_id)));
    if (pq::ntuples(row.get()) == 0) return std::optional<int64_t>();
    return std::optional<int64_t>(Int(row.get(), 0, 0));
  }
  Result<int64_t> CountTasks(const std::optional<std::string>& run_id) override {
    TELIC_ASSIGN_OR_RETURN(ResultPtr count, Exec("SELECT count(*) FROM graph_tasks WHERE run_id IS NOT DISTINCT FROM $1::text",
                                                 Params().Add(run_id)));
    return Int(count.get(), 0, 0);
  }
  Result<bool> InsertTask(const TaskRecord& t) override {
    return ChangedOne("INSERT INTO graph_tasks (task_id, run_id, parent_task_id, state, version, body_json) "
                      "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (task_id) DO NOTHING",
                      Params().Add(t.task_id).Add(t.run_id).Add(t.parent_task_id).Add(std::string(domain::Name(t.state))).Add(t.version)
                          .Add(StoredTaskBody(t)));
  }
  Result<bool> UpdateTask(const TaskRecord& t) override {
    return ChangedOne("UPDATE graph_tasks SET state = $1, version = $2, body_json = $3 WHERE task_id = $4 AND version = $5",
                      Params().Add(std::string(domain::Name(t.state))).Add(t.version).Add(StoredTaskBody(t)).Add(t.task_id).Add(t.version - 1));
  }
  Result<bool> InsertStory(const StoryRecord& s) override {
    return ChangedOne("INSERT INTO graph_stories (story_id, run_id, arbitration_task_id, version, body_json) "
                      "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (story_id) DO NOTHING",
                      Params().Add(s.story_id).Add(s.run_id).Add(s.arbitration_task_id).Add(s.version)
                          .Add(CanonicalJson(StoryToJson(s))));
  }
  Result<bool> UpdateStory(const StoryRecord& s) override {
    return ChangedOne("UPDATE graph_stories SET version = $1, body_json = $2 WHERE story_id = $3 AND version = $4",
                      Params().Add(s.version).Add(CanonicalJson(StoryToJson(s))).Add(s.story_id).Add(s.version - 1));
  }
  Status InsertApproval(const ApprovalRecord& a) override {
    TELIC_ASSIGN_OR_RETURN(ResultPtr done, Exec("INSERT INTO graph_approvals (approval_id, task_id, binding_sha256, "
                                                "used_at, body_json) VALUES ($1, $2, $3, NULL, $4)",
                                                Params().Add(a.approval_id).Add(a.task_id).Add(a.binding_sha256)
                                                    .Add(StoredApprovalBody(a))));
    return Ok();
  }
  Result<bool> UseApproval(const std::string& approval_id, const std::string& now) override {
    return ChangedOne("UPDATE graph_approvals SET used_at = $1 WHERE approval_id = $2 AND used_at IS NULL",
                      Params().Add(now).Add(approval_id));
  }
  Status InsertEvent(const TaskEventRecord& e) override {
    TELIC_ASSIGN_OR_RETURN(ResultPtr done, Exec("INSERT INTO graph_events (event_id, subject_id, run_id, kind, actor, "
                                                "payload_json, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                                                Params().Add(e.event_id).Add(e.subject_id).Add(e.run_id).Add(e.kind)
                                                    .Add(e.actor).Add(StoredEventPayload(e)).Add(e.created_at)));
    return Ok();
  }

 private:
  // Runs one statement; on failure keeps it and answers an error.
  Result<ResultPtr> Exec(const std::string& sql, const Params& params) {
    auto rows = Run(conn_, sql, params);
    if (rows) return std::move(*rows);
    failure_ = rows.error();
    return std::unexpected(ToError(rows.error(), "task graph write"));
  }
  Result<bool> ChangedOne(const std::string& sql, const Params& params) {
    TELIC_ASSIGN_OR_RETURN(ResultPtr done, Exec(sql, params));
    return std::string(pq::cmdTuples(done.get())) == "1";
  }

  PGconn* conn_;
  std::optional<PgFailure> failure_;
};

template <typename T, typename ReadRow>
Result<std::vector<T>> ReadRows(const ResultPtr& rows, ReadRow read) {
  std::vector<T> out;
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(T item, read(rows.get(), i));
    out.push_back(std::move(item));
  }
  return out;
}

Result<TaskRecord> TaskRow(const PGresult* r, int i) { return TaskFromStored(Text(r, i, 1), Int(r, i, 0)); }
Result<StoryRecord> StoryRow(const PGresult* r, int i) { return StoryFromStored(Text(r, i, 0)); }

}  // namespace

Status PgTaskStore::Apply(const TaskChange& change) {
  return InTransaction([this] { return db_.Acquire(); }, [&](PGconn* conn) -> Attempt {
    PG_DO(Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kPgGraphLockKey)));
    PgTaskRows rows(conn);
    if (Status applied = ApplyTaskChange(change, rows); !applied) {
      if (rows.failure()) return std::unexpected(Abort{std::nullopt, *rows.failure()});
      return std::unexpected(Because(applied.error()));
    }
    return {};
  });
}

Result<TaskRecord> PgTaskStore::GetTask(std::string_view task_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "task read",
                                                      "SELECT seq, body_json FROM graph_tasks WHERE task_id = $1",
                                                      Params().Add(task_id)));
  if (pq::ntuples(rows.get()) == 0) return Fail(ErrorCode::kNotFound, fmt::format("Task not found: {}", task_id));
  return TaskRow(rows.get(), 0);
}

Result<std::vector<TaskRecord>> PgTaskStore::ListTasks(const std::optional<std::string>& run_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "task list",
                                                      "SELECT seq, body_json FROM graph_tasks "
                                                      "WHERE run_id IS NOT DISTINCT FROM $1::text ORDER BY seq",
                                                      Params().Add(run_id)));
  return ReadRows<TaskRecord>(rows, TaskRow);
}

Result<std::vector<TaskEventRecord>> PgTaskStore::ListEvents(std::string_view subject_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "task event list",
                                                      "SELECT seq, event_id, subject_id, run_id, kind, actor, payload_json, "
                                                      "created_at FROM graph_events WHERE subject_id = $1 ORDER BY seq",
                                                      Params().Add(subject_id)));
  return ReadRows<TaskEventRecord>(rows, [](const PGresult* r, int i) -> Result<TaskEventRecord> {
    TaskEventRecord e;
    e.seq = Int(r, i, 0);
    e.event_id = Text(r, i, 1);
    e.subject_id = Text(r, i, 2);
    e.run_id = OptText(r, i, 3);
    e.kind = Text(r, i, 4);
    e.actor = Text(r, i, 5);
    e.payload = ParseStoredJson(Text(r, i, 6)).value_or(Json(nullptr));  // unreadable payloads read as null
    e.created_at = Text(r, i, 7);
    return e;
  });
}

Result<StoryRecord> PgTaskStore::GetStory(std::string_view story_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "story read",
                                                      "SELECT body_json FROM graph_stories WHERE story_id = $1",
                                                      Params().Add(story_id)));
  if (pq::ntuples(rows.get()) == 0) return Fail(ErrorCode::kNotFound, fmt::format("Story not found: {}", story_id));
  return StoryRow(rows.get(), 0);
}

Result<std::vector<StoryRecord>> PgTaskStore::ListStories(const std::optional<std::string>& run_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "story list",
                                                      "SELECT body_json FROM graph_stories "
                                                      "WHERE run_id IS NOT DISTINCT FROM $1::text ORDER BY seq",
                                                      Params().Add(run_id)));
  return ReadRows<StoryRecord>(rows, StoryRow);
}

Result<std::vector<StoryRecord>> PgTaskStore::StoriesArbitratedBy(std::string_view task_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "story lookup",
                                                      "SELECT body_json FROM graph_stories WHERE arbitration_task_id = $1 "
                                                      "ORDER BY seq",
                                                      Params().Add(task_id)));
  return ReadRows<StoryRecord>(rows, StoryRow);
}

Result<std::vector<ApprovalRecord>> PgTaskStore::ListApprovals(std::string_view task_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "approval list",
                                                      "SELECT body_json, used_at FROM graph_approvals WHERE task_id = $1 "
                                                      "ORDER BY seq",
                                                      Params().Add(task_id)));
  return ReadRows<ApprovalRecord>(rows, [](const PGresult* r, int i) {
    return ApprovalFromStored(Text(r, i, 0), OptText(r, i, 1));
  });
}

}  // namespace telic::store
