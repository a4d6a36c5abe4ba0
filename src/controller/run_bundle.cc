#include "controller/run_bundle.h"

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/ids.h"
#include "base/json_parse.h"
#include "base/sha256.h"
#include "controller/verify.h"
#include "store/record_codec.h"
#include "store/sqlite_store.h"
#include "store/state_dir.h"

namespace telic::controller {
namespace {

constexpr int kTracePage = 500;
constexpr int kSnapshotAttempts = 5;

// The run section: the run record's fields, each under its codec name.
Json RunJson(const store::RunRecord& r) { return store::RunRecordJson(r); }

Json ArtifactJson(const store::StoredArtifact& a) {
  static constexpr std::string_view kOmit[] = {"runId"};  // the bundle's own
  Json j = store::ArtifactMetaJson(a.meta, kOmit);
  j["body"] = a.canonical_body;
  return j;
}

Json EventJson(const store::TraceEventRecord& e) {
  Json j{{"eventId", e.event_id},
         {"sequence", e.sequence},
         {"timestamp", e.timestamp},
         {"actor", e.actor},
         {"phase", e.phase},
         {"eventType", e.event_type},
         {"inputRefs", e.input_refs},
         {"outputRefs", e.output_refs},
         {"summary", e.summary},
         {"budgetSnapshot", e.budget_snapshot},
         {"redactions", e.redactions},
         {"prevHash", e.prev_hash},
         {"hash", e.hash}};
  if (e.permission_decision) j["permissionDecision"] = *e.permission_decision;  // absent: none
  return j;
}

// The document without its bundleDigest, and the digests of its sections.
Json Document(const RunBundle& b) {
  Json artifacts = Json::array();
  for (const auto& a : b.artifacts) artifacts.push_back(ArtifactJson(a));
  Json trace = Json::array();
  for (const auto& e : b.trace) trace.push_back(EventJson(e));
  Json doc{{"format", kBundleFormat},   {"formatVersion", kBundleFormatVersion}, {"runId", b.run.run_id},
           {"run", RunJson(b.run)},      {"artifacts", artifacts},                {"trace", trace},
           {"verification", b.verification}};
  Json sections = Json::object();
  for (const char* name : {"run", "artifacts", "trace", "verification"}) sections[name] = Sha256Ref(CanonicalJson(doc[name]));
  doc["sections"] = sections;
  return doc;
}

// ---- strict reading, each error naming its JSON pointer ----

class Reader {
 public:
  explicit Reader(std::string pointer) : pointer_(std::move(pointer)) {}

  Status Object(const Json& j, std::initializer_list<std::string_view> required,
                std::initializer_list<std::string_view> optional = {}) const {
    return Object(j, std::span<const std::string_view>(required.begin(), required.size()),
                  std::span<const std::string_view>(optional.begin(), optional.size()));
  }
  Status Object(const Json& j, std::span<const std::string_view> required,
                std::span<const std::string_view> optional = {}) const {
    if (!j.is_object()) return Bad("", "must be an object");
    for (auto key : required) {
      if (!j.contains(std::string(key))) return Bad("/" + std::string(key), "is required");
    }
    for (const auto& [key, value] : j.items()) {
      bool known = std::find(required.begin(), required.end(), key) != required.end() ||
                   std::find(optional.begin(), optional.end(), key) != optional.end();
      if (!known) return Bad("/" + key, "unknown field");
    }
    return Ok();
  }
  Result<std::string> Text(const Json& j, const std::string& key) const {
    const Json& v = j.at(key);
    if (!v.is_string()) return Bad("/" + key, "must be a string");
    return v.get<std::string>();
  }
  // A string in the wire's identifier grammar (base/ids.h): ids are printed
  // and used as keys, so escapes, NUL, '/' and huge values stop here.
  Result<std::string> Id(const Json& j, const std::string& key) const {
    TELIC_ASSIGN_OR_RETURN(std::string text, Text(j, key));
    if (std::string problem = IdentifierProblem(text); !problem.empty()) {
      return Bad("/" + key, "is not an identifier: " + problem);
    }
    return text;
  }
  Result<std::optional<std::string>> OptId(const Json& j, const std::string& key) const {
    if (j.at(key).is_null()) return std::optional<std::string>();
    TELIC_ASSIGN_OR_RETURN(std::string id, Id(j, key));
    return std::optional<std::string>(std::move(id));
  }
  Result<std::optional<std::string>> OptText(const Json& j, const std::string& key) const {
    if (j.at(key).is_null()) return std::optional<std::string>();
    TELIC_ASSIGN_OR_RETURN(std::string text, Text(j, key));
    return std::optional<std::string>(std::move(text));
  }
  // A word of a closed vocabulary (domain/vocabulary.h), read with `parse`:
  // `reason` when the text is none of its words.
  template <typename E>
  Result<E> Word(const Json& j, const std::string& key, Result<E> (*parse)(std::string_view, std::string_view),
                 std::string_view reason) const {
    TELIC_ASSIGN_OR_RETURN(std::string text, Text(j, key));
    Result<E> value = parse(text, "/" + key);
    if (!value) return Bad("/" + key, reason);
    return value;
  }
  template <typename E>
  Result<std::optional<E>> OptWord(const Json& j, const std::string& key,
                                   Result<E> (*parse)(std::string_view, std::string_view), std::string_view reason) const {
    if (j.at(key).is_null()) return std::optional<E>();
    TELIC_ASSIGN_OR_RETURN(E value, Word(j, key, parse, reason));
    return std::optional<E>(value);
  }
  Result<int64_t> Int(const Json& j, const std::string& key) const {
    const Json& v = j.at(key);
    if (!v.is_number_integer()) return Bad("/" + key, "must be an integer");
    return v.get<int64_t>();
  }
  Result<std::vector<std::string>> Texts(const Json& j, const std::string& key) const {
    const Json& v = j.at(key);
    if (!v.is_array()) return Bad("/" + key, "must be an array of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) return Bad(fmt::format("/{}/{}", key, i), "must be a string");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }
  std::unexpected<Error> Bad(const std::string& suffix, std::string_view reason) const {
    return std::unexpected(Error(ErrorCode::kInvalidArgument, fmt::format("bundle {}{}: {}", pointer_, suffix, reason)));
  }

 private:
  std::string pointer_;
};

// Reads each run field from the bundle's "run" by its codec name and type
// (store::ForEachRunField). Type errors stop at the first; a count out of
// range is kept and reported after the fields were read, as the version and
// status checks that follow.
class RunFieldReader {
 public:
  RunFieldReader(const Reader& reader, const Json& j) : r_(reader), j_(j) {}
  const Status& status() const { return status_; }
  const std::optional<Error>& range_error() const { return range_error_; }

  void operator()(const store::FieldName& f, std::string& v) {
    if (status_) Keep(f.check == store::FieldCheck::kId ? r_.Id(j_, Key(f)) : r_.Text(j_, Key(f)), v);
  }
  void operator()(const store::FieldName& f, std::optional<std::string>& v) {
    if (status_) Keep(f.check == store::FieldCheck::kId ? r_.OptId(j_, Key(f)) : r_.OptText(j_, Key(f)), v);
  }
  void operator()(const store::FieldName& f, int64_t& v) {
    if (status_) Keep(r_.Int(j_, Key(f)), v);
  }
  void operator()(const store::FieldName& f, int& v) {
    int64_t wide = 0;
    (*this)(f, wide);
    if (!status_) return;
    if ((wide < 0 || wide > 1'000'000) && !range_error_) range_error_ = r_.Bad("/" + Key(f), "out of range").error();
    v = static_cast<int>(wide);
  }
  void operator()(const store::FieldName& f, Json& v) {
    if (!status_) return;
    if (!j_[Key(f)].is_object()) {
      status_ = r_.Bad("/" + Key(f), "must be an object");
      return;
    }
    v = j_[Key(f)];
  }
  void operator()(const store::FieldName& f, domain::Mode& v) { Word(f, v, domain::ParseMode, "unknown mode"); }
  void operator()(const store::FieldName& f, domain::Topology& v) {
    Word(f, v, domain::ParseTopology, "unknown topology");
  }
  void operator()(const store::FieldName& f, domain::RunStatus& v) {
    Word(f, v, domain::ParseRunStatus, "unknown run status");
  }
  void operator()(const store::FieldName& f, domain::Phase& v) { Word(f, v, domain::ParsePhase, "unknown phase"); }
  void operator()(const store::FieldName& f, std::optional<domain::Phase>& v) {
    if (status_) Keep(r_.OptWord(j_, Key(f), domain::ParsePhase, "unknown phase"), v);
  }
  void operator()(const store::FieldName& f, std::optional<domain::RunStatus>& v) {
    if (status_) Keep(r_.OptWord(j_, Key(f), domain::ParseRunStatus, "unknown run status"), v);
  }

 private:
  template <typename E>
  void Word(const store::FieldName& f, E& v, Result<E> (*parse)(std::string_view, std::string_view),
            std::string_view reason) {
    if (status_) Keep(r_.Word(j_, Key(f), parse, reason), v);
  }
  static std::string Key(const store::FieldName& f) { return std::string(f.json); }
  template <typename T>
  void Keep(Result<T> read, T& out) {
    if (read) {
      out = std::move(*read);
    } else {
      status_ = std::unexpected(read.error());
    }
  }

  const Reader& r_;
  const Json& j_;
  Status status_ = Ok();
  std::optional<Error> range_error_;
};

Result<store::RunRecord> ReadRun(const Json& j) {
  Reader r("/run");
  store::RunRecord run;
  std::vector<std::string_view> fields;
  store::ForEachRunField(run, [&](const store::FieldName& f, const auto&) { fields.push_back(f.json); });
  TELIC_RETURN_IF_ERROR(r.Object(j, fields));
  RunFieldReader reader(r, j);
  store::ForEachRunField(run, reader);
  TELIC_RETURN_IF_ERROR(reader.status());
  if (reader.range_error()) return std::unexpected(*reader.range_error());
  if (run.version < 1) return r.Bad("/version", "must be at least 1");
  return run;
}

Result<store::StoredArtifact> ReadArtifact(const Json& j, const std::string& run_id, size_t index) {
  Reader r(fmt::format("/artifacts/{}", index));
  TELIC_RETURN_IF_ERROR(r.Object(j, {"id", "type", "schemaVersion", "producer", "sha256", "sourceRefs", "redaction",
                                     "createdAt", "body"}));
  store::StoredArtifact a;
  a.meta.run_id = run_id;
  TELIC_ASSIGN_OR_RETURN(a.meta.id, r.Id(j, "id"));
  TELIC_ASSIGN_OR_RETURN(a.meta.type, r.Word(j, "type", domain::ParseArtifactType, "unknown artifact type"));
  TELIC_ASSIGN_OR_RETURN(a.meta.schema_version, r.Text(j, "schemaVersion"));
  TELIC_ASSIGN_OR_RETURN(a.meta.producer, r.Text(j, "producer"));
  TELIC_ASSIGN_OR_RETURN(a.meta.sha256, r.Text(j, "sha256"));
  TELIC_ASSIGN_OR_RETURN(a.meta.source_refs, r.Texts(j, "sourceRefs"));
  TELIC_ASSIGN_OR_RETURN(a.meta.redaction, r.Text(j, "redaction"));
  TELIC_ASSIGN_OR_RETURN(a.meta.created_at, r.Text(j, "createdAt"));
  TELIC_ASSIGN_OR_RETURN(a.canonical_body, r.Text(j, "body"));
  if (a.canonical_body.size() > store::kMaxArtifactBodyBytes) return r.Bad("/body", "exceeds the artifact body limit");
  return a;
}

Result<store::TraceEventRecord> ReadEvent(const Json& j, const std::string& run_id, size_t index) {
  Reader r(fmt::format("/trace/{}", index));
  TELIC_RETURN_IF_ERROR(r.Object(j, {"eventId", "sequence", "timestamp", "actor", "phase", "eventType", "inputRefs",
                                     "outputRefs", "summary", "budgetSnapshot", "redactions", "prevHash", "hash"},
                                 {"permissionDecision"}));
  store::TraceEventRecord e;
  e.run_id = run_id;
  TELIC_ASSIGN_OR_RETURN(e.event_id, r.Id(j, "eventId"));
  TELIC_ASSIGN_OR_RETURN(e.sequence, r.Int(j, "sequence"));
  TELIC_ASSIGN_OR_RETURN(e.timestamp, r.Text(j, "timestamp"));
  TELIC_ASSIGN_OR_RETURN(e.actor, r.Text(j, "actor"));
  TELIC_ASSIGN_OR_RETURN(e.phase, r.Text(j, "phase"));
  TELIC_ASSIGN_OR_RETURN(e.event_type, r.Text(j, "eventType"));
  TELIC_ASSIGN_OR_RETURN(e.input_refs, r.Texts(j, "inputRefs"));
  TELIC_ASSIGN_OR_RETURN(e.output_refs, r.Texts(j, "outputRefs"));
  TELIC_ASSIGN_OR_RETURN(e.summary, r.Text(j, "summary"));
  TELIC_ASSIGN_OR_RETURN(e.prev_hash, r.Text(j, "prevHash"));
  TELIC_ASSIGN_OR_RETURN(e.hash, r.Text(j, "hash"));
  if (!j["budgetSnapshot"].is_object()) return r.Bad("/budgetSnapshot", "must be an object");
  if (!j["redactions"].is_array()) return r.Bad("/redactions", "must be an array");
  e.budget_snapshot = j["budgetSnapshot"];
  e.redactions = j["redactions"];
  if (j.contains("permissionDecision")) e.permission_decision = j["permissionDecision"];
  return e;
}

store::Change CreationOf(const RunBundle& b) {
  store::Change change;
  change.run = b.run;
  change.artifacts = b.artifacts;
  change.events = b.trace;
  return change;
}

// Every stored hash of `run_id` equals the bundle's, in order.
Status SameTrace(store::Store& store, const RunBundle& b) {
  size_t i = 0;
  int64_t after = 0;
  while (true) {
    TELIC_ASSIGN_OR_RETURN(store::TracePage page, store.GetTrace(b.run.run_id, after, kTracePage));
    for (const auto& e : page.events) {
      if (i >= b.trace.size() || e.hash != b.trace[i].hash) {
        return Fail(ErrorCode::kDataLoss, fmt::format("stored trace event {} does not hash as in the bundle", e.sequence));
      }
      ++i;
      after = e.sequence;
    }
    if (!page.has_more) break;
  }
  if (i != b.trace.size()) return Fail(ErrorCode::kDataLoss, "the stored trace is shorter than the bundle's");
  return Ok();
}

// Loads the bundle into a scratch ledger and compares what telic computes
// there with what the bundle recorded; appends problems.
void CheckByReplay(const RunBundle& b, const std::string& state_dir, std::vector<std::string>& problems) {
  auto scratch = store::ScratchDir::Create(state_dir);
  if (!scratch) {
    problems.push_back("cannot create a scratch directory to replay the bundle: " + scratch.error().message());
    return;
  }
  auto store = store::SqliteStore::Open((*scratch)->path() + "/scratch.sqlite3");
  if (!store) {
    problems.push_back("scratch ledger: " + store.error().message());
    return;
  }
  if (auto created = (*store)->CreateRun(CreationOf(b)); !created) {
    problems.push_back("the bundle cannot be loaded into a ledger: " + created.error().message());
    return;
  }
  if (auto same = SameTrace(**store, b); !same) problems.push_back(same.error().message());
  ManualClock clock(0);
  SequentialIdSource ids;
  RunService service(**store, clock, ids, b.run.repository_root);
  auto verify = VerifyRun(service, b.run.run_id);
  auto replay = service.ReplayRun(b.run.run_id);
  if (!verify || !replay) {
    problems.push_back("the bundle's run cannot be verified or replayed: " +
                       (!verify ? verify.error().message() : replay.error().message()));
    return;
  }
  if (*verify != b.verification["verify"]) problems.push_back("the recorded verify report differs from the bundle's content");
  if (*replay != b.verification["replay"]) problems.push_back("the recorded replay report differs from the bundle's content");
}

}  // namespace

Result<std::string> ExportBundle(RunService& service, const std::string& run_id) {
  store::Store& store = service.store();
  for (int attempt = 1;; ++attempt) {
    RunBundle b;
    TELIC_ASSIGN_OR_RETURN(b.run, store.GetRun(run_id));
    TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> metas, store.ListArtifacts(run_id));
    for (const auto& meta : metas) {
      TELIC_ASSIGN_OR_RETURN(store::StoredArtifact artifact, store.GetArtifact(run_id, meta.id));
      b.artifacts.push_back(std::move(artifact));
    }
    int64_t after = 0;
    while (true) {
      TELIC_ASSIGN_OR_RETURN(store::TracePage page, store.GetTrace(run_id, after, kTracePage));
      for (auto& e : page.events) {
        after = e.sequence;
        b.trace.push_back(std::move(e));
      }
      if (!page.has_more) break;
    }
    TELIC_ASSIGN_OR_RETURN(Json verify, VerifyRun(service, run_id));
    TELIC_ASSIGN_OR_RETURN(Json replay, service.ReplayRun(run_id));
    TELIC_ASSIGN_OR_RETURN(store::RunRecord again, store.GetRun(run_id));
    // Artifacts and events without a version bump (DENY records, Evidence)
    // also count as a change: compare the counts too.
    auto artifacts_now = store.ListArtifacts(run_id);
    bool stable = again.version == b.run.version && artifacts_now && artifacts_now->size() == b.artifacts.size() &&
                  verify["traceEvents"].get<int64_t>() == static_cast<int64_t>(b.trace.size());
    if (!stable) {
      if (attempt >= kSnapshotAttempts) return Fail(ErrorCode::kUnavailable, "the run kept changing while it was exported; retry");
      continue;
    }
    b.verification = Json{{"verify", verify}, {"replay", replay}};
    Json doc = Document(b);
    doc["bundleDigest"] = Sha256Ref(CanonicalJson(doc));
    return CanonicalJson(doc) + "\n";
  }
}

Result<RunBundle> ParseBundle(std::string_view bytes) {
  if (bytes.size() > kMaxBundleBytes) return Fail(ErrorCode::kInvalidArgument, "bundle: larger than the 1 GiB limit");
  if (bytes.empty() || bytes.back() != '\n') return Fail(ErrorCode::kDataLoss, "bundle: does not end with a newline");
  std::string_view text = bytes.substr(0, bytes.size() - 1);
  auto parsed = ParseJsonStrict(text, ParseLimits{kMaxBundleBytes, kMaxJsonDepth});
  if (!parsed) return Fail(ErrorCode::kDataLoss, "bundle: not valid JSON: " + parsed.error().message());
  Json doc = std::move(*parsed);
  Reader r("");
  TELIC_RETURN_IF_ERROR(r.Object(doc, {"format", "formatVersion", "runId", "run", "artifacts", "trace", "verification",
                                       "sections", "bundleDigest"}));
  if (doc["format"] != kBundleFormat) return r.Bad("/format", "is not \"telic-run-bundle\"");
  if (doc["formatVersion"] != kBundleFormatVersion) return r.Bad("/formatVersion", "unsupported version (this telic reads 1)");
  if (CanonicalJson(doc) != text) {
    return Fail(ErrorCode::kDataLoss, "bundle: the file is not the canonical form of its content (bytes were changed)");
  }
  RunBundle b;
  TELIC_ASSIGN_OR_RETURN(b.bundle_digest, r.Text(doc, "bundleDigest"));
  Json unsigned_doc = doc;
  unsigned_doc.erase("bundleDigest");
  if (Sha256Ref(CanonicalJson(unsigned_doc)) != b.bundle_digest) {
    return Fail(ErrorCode::kDataLoss, "bundle /bundleDigest: does not match the bundle's content");
  }
  const Json& sections = doc["sections"];
  TELIC_RETURN_IF_ERROR(Reader("/sections").Object(sections, {"run", "artifacts", "trace", "verification"}));
  for (const char* name : {"run", "artifacts", "trace", "verification"}) {
    if (sections[name] != Sha256Ref(CanonicalJson(doc[name]))) {
      return Fail(ErrorCode::kDataLoss, fmt::format("bundle /{}: does not match its digest in /sections/{}", name, name));
    }
  }
  TELIC_ASSIGN_OR_RETURN(b.run, ReadRun(doc["run"]));
  if (doc["runId"] != b.run.run_id) return r.Bad("/runId", "differs from /run/runId");
  if (!doc["artifacts"].is_array()) return r.Bad("/artifacts", "must be an array");
  if (doc["artifacts"].size() > store::kMaxArtifactsPerRun) return r.Bad("/artifacts", "more than a run may hold");
  for (size_t i = 0; i < doc["artifacts"].size(); ++i) {
    TELIC_ASSIGN_OR_RETURN(store::StoredArtifact a, ReadArtifact(doc["artifacts"][i], b.run.run_id, i));
    b.artifacts.push_back(std::move(a));
  }
  if (!doc["trace"].is_array()) return r.Bad("/trace", "must be an array");
  if (doc["trace"].size() > static_cast<size_t>(store::kMaxTraceEventsPerRun)) return r.Bad("/trace", "more events than a run may hold");
  for (size_t i = 0; i < doc["trace"].size(); ++i) {
    TELIC_ASSIGN_OR_RETURN(store::TraceEventRecord e, ReadEvent(doc["trace"][i], b.run.run_id, i));
    b.trace.push_back(std::move(e));
  }
  TELIC_RETURN_IF_ERROR(Reader("/verification").Object(doc["verification"], {"verify", "replay"}));
  b.verification = doc["verification"];
  return b;
}

// Every Evidence's provenance (its producer, store::ProvenanceOf) must be
// what the hash-chained event that stored it says: an observed one by a
// kEvidenceObservedEvent of actor "controller", a claimed one by any other
// event. Appends problems; returns {"observed": n, "claimed": m}.
Json CheckProvenance(const RunBundle& b, std::vector<std::string>& problems) {
  int64_t observed = 0, claimed = 0;
  for (const auto& a : b.artifacts) {
    auto provenance = store::ProvenanceOf(a.meta);
    if (!provenance) continue;
    (*provenance == store::Provenance::kObserved ? observed : claimed) += 1;
    std::string uri = store::ArtifactUri(b.run.run_id, a.meta.id);
    auto stored_by = std::find_if(b.trace.begin(), b.trace.end(), [&](const store::TraceEventRecord& e) {
      return std::find(e.output_refs.begin(), e.output_refs.end(), uri) != e.output_refs.end() &&
             (e.event_type == store::kEvidenceObservedEvent || e.event_type == store::kEvidenceClaimedEvent);
    });
    if (stored_by == b.trace.end()) {
      problems.push_back(fmt::format("evidence {} has no trace event that stored it, so its provenance is not covered", a.meta.id));
      continue;
    }
    bool event_observed = stored_by->event_type == store::kEvidenceObservedEvent && stored_by->actor == "controller";
    if (event_observed != (*provenance == store::Provenance::kObserved)) {
      problems.push_back(fmt::format("evidence {} is {} by its producer, but trace event {} ({}) says {}", a.meta.id,
                                     store::ProvenanceName(*provenance), stored_by->sequence, stored_by->event_type,
                                     event_observed ? "observed" : "claimed"));
    }
  }
  return {{"observed", observed}, {"claimed", claimed}};
}

Json CheckBundle(const RunBundle& b, const std::string& state_dir) {
  std::vector<std::string> problems;
  std::vector<std::string> ids;
  for (size_t i = 0; i < b.artifacts.size(); ++i) {
    const auto& a = b.artifacts[i];
    if (Sha256Ref(a.canonical_body) != a.meta.sha256) {
      problems.push_back(fmt::format("artifact {} (/artifacts/{}) does not match its sha256", a.meta.id, i));
    }
    auto body = ParseJsonStrict(a.canonical_body, ParseLimits{store::kMaxArtifactBodyBytes, kMaxJsonDepth});
    if (!body) {
      problems.push_back(fmt::format("artifact {} (/artifacts/{}/body) is not JSON: {}", a.meta.id, i, body.error().message()));
    } else if (CanonicalJson(*body) != a.canonical_body) {
      problems.push_back(fmt::format("artifact {} (/artifacts/{}/body) is not canonical JSON", a.meta.id, i));
    }
    if (std::find(ids.begin(), ids.end(), a.meta.id) != ids.end()) problems.push_back("duplicate artifact id " + a.meta.id);
    ids.push_back(a.meta.id);
  }
  std::string prev;
  for (size_t i = 0; i < b.trace.size(); ++i) {
    const auto& e = b.trace[i];
    if (e.sequence != static_cast<int64_t>(i) + 1) problems.push_back(fmt::format("trace gap before sequence {}", e.sequence));
    if (e.prev_hash != prev) problems.push_back(fmt::format("event {} does not chain to its predecessor", e.sequence));
    if (store::ComputeTraceEventHash(e) != e.hash) problems.push_back(fmt::format("event {} hash mismatch", e.sequence));
    prev = e.hash;
  }
  Json provenance = CheckProvenance(b, problems);
  if (problems.empty()) CheckByReplay(b, state_dir, problems);
  return Json{{"ok", problems.empty()},
              {"evidenceProvenance", std::move(provenance)},
              {"runId", b.run.run_id},
              {"bundleDigest", b.bundle_digest},
              {"artifacts", b.artifacts.size()},
              {"traceEvents", b.trace.size()},
              {"finalTraceHash", b.trace.empty() ? std::string() : b.trace.back().hash},
              {"problems", problems}};
}

Status ImportBundle(store::Store& store, const RunBundle& bundle) {
  TELIC_RETURN_IF_ERROR(store.CreateRun(CreationOf(bundle)));
  return SameTrace(store, bundle);
}

}  // namespace telic::controller
