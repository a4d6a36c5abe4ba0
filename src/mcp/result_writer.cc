#include "mcp/result_writer.h"

#include <array>
#include <vector>

#include "base/json_writer.h"
#include "schema/host_schemas.h"

namespace telic::mcp {
namespace {

// Contexts of ResultOrder (0 is plain: map order).
enum Context : int {
  kPlain = 0,
  kRoot,
  kRun,
  kRunBudgets,
  kNextAction,
  kAdditionalSchemas,
};

constexpr std::array<std::string_view, 11> kRootOrder = {
    "ok", "error", "code", "issues", "run", "artifact", "artifacts", "events", "hasMore", "nextAction", "manifest"};
// The reference's RunEnvelope member order (its start_run result).
constexpr std::array<std::string_view, 15> kRunOrder = {
    "runId",   "schemaVersion", "repositoryRoot", "requestedMode", "topology",    "escalationCount",
    "priorRunId", "status",     "phase",          "resumePhase",   "version",     "budgets",
    "outcomeHint", "createdAt", "updatedAt"};
constexpr std::array<std::string_view, 2> kRunBudgetsOrder = {"promptRevisionsRemaining",
                                                              "postExecutionRemediationsRemaining"};
// The reference's NextAction member order.
constexpr std::array<std::string_view, 18> kNextActionOrder = {
    "schemaVersion",      "id",           "runId",          "createdAt",          "rationaleSummary",
    "kind",               "phase",        "logicalRole",    "instructionRef",     "inputRefs",
    "contextManifestRef", "requiredOutputType", "requiredOutputSchema", "additionalOutputSchemas",
    "workNodeId",         "effectivePermissions", "remainingBudgets", "stopConditions"};

// The served artifact schema `value` is a reference to (schema::ServedSchemaRef,
// any indent) or equal to (indent -1 or 2 only: `equal`), else nullptr.
const schema::HostSchema* ServedSchemaOf(const Json& value, bool& equal) {
  equal = false;
  if (const schema::HostSchema* referenced = schema::ReferencedServedSchema(value)) return referenced;
  if (!value.is_object()) return nullptr;
  auto title = value.find("title");
  if (title == value.end() || !title->is_string()) return nullptr;
  auto schema = schema::ArtifactHostSchema(title->get_ref<const std::string&>());
  if (!schema || !(value == (*schema)->json())) return nullptr;
  equal = true;
  return *schema;
}

// Where a text skeleton (ResultOrder::kSkeleton) left out the pretty text
// of `schema` at `depth`. The escaped text is looked up when it is written
// (pretty_escaped's view of a depth it does not cache lasts until its next
// call on the thread).
struct Splice {
  size_t offset;
  const schema::HostSchema* schema;
  int depth;
};

class ResultOrder : public WriteOrder {
 public:
  // Written instead of each served schema: its text (kText), or nothing
  // with a Splice recorded (kSkeleton, pretty only).
  enum Schemas { kText, kSkeleton };
  // reorder: the wire order of the text content; otherwise map order.
  ResultOrder(int indent, bool reorder, Schemas schemas = kText)
      : indent_(indent), reorder_(reorder), schemas_(schemas) {}

  const std::vector<Splice>& splices() const { return splices_; }

  std::span<const std::string_view> FirstKeys(int context) const override {
    if (!reorder_) return {};
    switch (context) {
      case kRoot: return kRootOrder;
      case kRun: return kRunOrder;
      case kRunBudgets: return kRunBudgetsOrder;
      case kNextAction: return kNextActionOrder;
      default: return {};
    }
  }

  int ChildContext(int context, std::string_view key) const override {
    if (context == kRoot && key == "run") return kRun;
    if (context == kRoot && key == "nextAction") return kNextAction;
    if (context == kRun && key == "budgets") return kRunBudgets;
    if (context == kNextAction && key == "additionalOutputSchemas") return kAdditionalSchemas;
    return kPlain;
  }

  std::optional<std::string_view> Precomputed(int context, std::string_view key, const Json& value,
                                              int depth) const override {
    if (!((context == kNextAction && key == "requiredOutputSchema") || context == kAdditionalSchemas)) {
      return std::nullopt;
    }
    bool equal = false;
    const schema::HostSchema* schema = ServedSchemaOf(value, equal);
    if (schema == nullptr || (equal && indent_ >= 0 && indent_ != 2)) return std::nullopt;
    if (indent_ < 0) return std::string_view(schema->compact());
    if (schemas_ == kSkeleton) {
      pending_ = Splice{0, schema, depth};
      return std::string_view();
    }
    return schema->pretty(depth);
  }

  void Placed(size_t offset) const override {
    if (schemas_ == kSkeleton) splices_.push_back(Splice{offset, pending_.schema, pending_.depth});
  }

 private:
  int indent_;
  bool reorder_;
  Schemas schemas_;
  mutable Splice pending_{};               // kSkeleton: the schema Precomputed just left out
  mutable std::vector<Splice> splices_;  // kSkeleton: every schema left out, in text order
};

// Appends `text` escaped as the inside of a JSON string literal (what
// WriteJsonString writes between its quotes).
void AppendInsideString(std::string_view text, std::string& out) {
  const size_t at = out.size();
  WriteJsonString(text, out);
  out.pop_back();
  out.erase(at, 1);
}

// Appends the string literal of the text whose skeleton is `skeleton`: the
// skeleton's bytes with each splice's escaped schema text put back at its
// offset. Escaping works byte by byte and every splice sits between ASCII
// bytes, so this is the literal WriteJsonString writes for the whole text.
void WriteSplicedString(std::string_view skeleton, const std::vector<Splice>& splices, std::string& out) {
  if (splices.empty()) {
    WriteJsonString(skeleton, out);
    return;
  }
  out.push_back('"');
  size_t from = 0;
  for (const Splice& splice : splices) {
    AppendInsideString(skeleton.substr(from, splice.offset - from), out);
    out += splice.schema->pretty_escaped(splice.depth);
    from = splice.offset;
  }
  AppendInsideString(skeleton.substr(from), out);
  out.push_back('"');
}

std::string WriteBody(const Json& payload, std::string_view text, const std::vector<Splice>& splices, bool is_error,
                      size_t text_bytes) {
  ResultOrder order(-1, false);
  std::string out;
  out.reserve(text_bytes * 2 + 1024);
  out += ",\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"text\":";
  WriteSplicedString(text, splices, out);
  out += ",\"type\":\"text\"}],";
  if (is_error) out += "\"isError\":true,";
  out += "\"structuredContent\":";
  WriteJson(payload, -1, out, &order, kRoot);
  out += "}}";
  return out;
}

}  // namespace

std::string ToolResultText(const Json& payload, bool pretty) {
  const int indent = pretty ? 2 : -1;
  ResultOrder order(indent, true);
  std::string out;
  out.reserve(pretty ? 32 * 1024 : 512);
  WriteJson(payload, indent, out, &order, kRoot);
  return out;
}

std::string ToolResultBody(const Json& payload, std::string_view text, bool is_error) {
  return WriteBody(payload, text, {}, is_error, text.size());
}

std::string ToolResultBody(const Json& payload, bool is_error) {
  if (is_error) return ToolResultBody(payload, ToolResultText(payload, false), true);
  ResultOrder skeleton_order(2, true, ResultOrder::kSkeleton);
  std::string skeleton;
  skeleton.reserve(8 * 1024);
  WriteJson(payload, 2, skeleton, &skeleton_order, kRoot);
  size_t text_bytes = skeleton.size();
  for (const Splice& splice : skeleton_order.splices()) {
    text_bytes += splice.schema->pretty_escaped(splice.depth).size();  // cached: no copy, no work
  }
  return WriteBody(payload, skeleton, skeleton_order.splices(), false, text_bytes);
}

std::string ToolResultLineFromBody(const Json& id, std::string_view body) {
  std::string out;
  out.reserve(body.size() + 64);
  out += "{\"id\":";
  WriteJson(id, -1, out);
  out += body;
  return out;
}

std::string ToolResultLine(const Json& id, const Json& payload, std::string_view text, bool is_error) {
  return ToolResultLineFromBody(id, ToolResultBody(payload, text, is_error));
}

}  // namespace telic::mcp
