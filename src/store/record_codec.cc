#include "store/record_codec.h"

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>

namespace telic::store {
namespace {

template <typename T>
concept Vocabulary = std::is_enum_v<T>;

// The parser of each vocabulary a stored record holds (its stored name).
Result<domain::RunStatus> ParseWord(std::string_view text, std::string_view column, domain::RunStatus*) {
  return domain::ParseRunStatus(text, column);
}
Result<domain::Mode> ParseWord(std::string_view text, std::string_view column, domain::Mode*) {
  return domain::ParseMode(text, column);
}
Result<domain::Topology> ParseWord(std::string_view text, std::string_view column, domain::Topology*) {
  return domain::ParseTopology(text, column);
}
Result<domain::Phase> ParseWord(std::string_view text, std::string_view column, domain::Phase*) {
  return domain::ParsePhase(text, column);
}
Result<domain::ArtifactType> ParseWord(std::string_view text, std::string_view column, domain::ArtifactType*) {
  return domain::ParseArtifactType(text, column);
}

// Writes one field as its column (JSON as canonical text).
struct Encoder {
  RowWriter& row;
  void operator()(const FieldName&, const std::string& v) const { row.Text(v); }
  void operator()(const FieldName&, const std::optional<std::string>& v) const {
    if (v) {
      row.Text(*v);
    } else {
      row.Null();
    }
  }
  void operator()(const FieldName&, int v) const { row.Int(v); }
  void operator()(const FieldName&, int64_t v) const { row.Int(v); }
  void operator()(const FieldName&, const Json& v) const { row.Text(CanonicalJson(v)); }
  void operator()(const FieldName&, const std::optional<Json>& v) const {
    if (v) {
      row.Text(CanonicalJson(*v));
    } else {
      row.Null();
    }
  }
  void operator()(const FieldName&, const std::vector<std::string>& v) const { row.Text(CanonicalJson(Json(v))); }
  template <Vocabulary E>
  void operator()(const FieldName&, E v) const {
    row.Text(domain::Name(v));
  }
  template <Vocabulary E>
  void operator()(const FieldName&, const std::optional<E>& v) const {
    if (v) {
      row.Text(domain::Name(*v));
    } else {
      row.Null();
    }
  }
};

// Reads one field from the next column; after the first failure it reads
// nothing more and `status` holds the failure. `key` names the row in a
// kDataLoss error (called once the key's own fields are read).
template <typename KeyFn>
struct Decoder {
  const RowReader& row;
  int column;
  std::string_view table;
  KeyFn key;
  Status status = Ok();

  bool Next(int& at) {
    at = column++;
    return status.has_value();
  }
  void operator()(const FieldName&, std::string& v) {
    if (int at; Next(at)) v = row.Text(at);
  }
  void operator()(const FieldName&, std::optional<std::string>& v) {
    if (int at; Next(at)) v = row.IsNull(at) ? std::nullopt : std::optional<std::string>(row.Text(at));
  }
  void operator()(const FieldName& name, int64_t& v) {
    if (int at; Next(at)) Keep(DecodeIntColumn(row, at, table, key(), name.column), v);
  }
  void operator()(const FieldName& name, int& v) {
    int64_t wide = 0;
    (*this)(name, wide);
    v = static_cast<int>(wide);
  }
  void operator()(const FieldName& name, Json& v) {
    if (int at; Next(at)) Keep(DecodeJsonColumn(table, key(), name.column, row.Text(at)), v);
  }
  void operator()(const FieldName& name, std::optional<Json>& v) {
    int at;
    if (!Next(at) || row.IsNull(at)) return;
    Json parsed;
    Keep(DecodeJsonColumn(table, key(), name.column, row.Text(at)), parsed);
    if (status) v = std::move(parsed);
  }
  void operator()(const FieldName& name, std::vector<std::string>& v) {
    if (int at; Next(at)) Keep(DecodeListColumn(table, key(), name.column, row.Text(at)), v);
  }
  template <Vocabulary E>
  void operator()(const FieldName& name, E& v) {
    if (int at; Next(at)) Keep(Word<E>(name, row.Text(at)), v);
  }
  template <Vocabulary E>
  void operator()(const FieldName& name, std::optional<E>& v) {
    int at;
    if (!Next(at) || row.IsNull(at)) return;
    E parsed{};
    Keep(Word<E>(name, row.Text(at)), parsed);
    if (status) v = parsed;
  }
  template <Vocabulary E>
  Result<E> Word(const FieldName& name, const std::string& text) {
    Result<E> value = ParseWord(text, name.column, static_cast<E*>(nullptr));
    if (!value) return std::unexpected(UnreadableColumn(table, key(), name.column, value.error()));
    return value;
  }

  template <typename T>
  void Keep(Result<T> decoded, T& out) {
    if (decoded) {
      out = std::move(*decoded);
    } else {
      status = std::unexpected(decoded.error());
    }
  }
};

// Puts each field not omitted under its JSON name.
struct JsonWriter {
  Json& out;
  std::span<const std::string_view> omit;
  template <typename T>
  void operator()(const FieldName& name, const T& value) const {
    if (std::find(omit.begin(), omit.end(), name.json) != omit.end()) return;
    out[std::string(name.json)] = ToJson(value);
  }
  template <typename T>
  static Json ToJson(const T& value) {
    return Json(value);
  }
  static Json ToJson(const std::optional<std::string>& value) { return value ? Json(*value) : Json(nullptr); }
  // A vocabulary as its stored name (a phase's internal name, as the wire's run object carries it).
  template <Vocabulary E>
  static Json ToJson(const E& value) {
    return Json(std::string(domain::Name(value)));
  }
  template <Vocabulary E>
  static Json ToJson(const std::optional<E>& value) {
    return value ? ToJson(*value) : Json(nullptr);
  }
};

template <typename KeyFn>
Decoder<KeyFn> MakeDecoder(const RowReader& row, int first, std::string_view table, KeyFn key) {
  return Decoder<KeyFn>{row, first, table, std::move(key)};
}

// "a, b, c" of the columns a ForEach*Field template names.
template <typename Record, typename ForEach>
std::string ColumnList(ForEach for_each) {
  Record record;
  std::string out;
  for_each(record, [&](const FieldName& name, const auto&) {
    if (!out.empty()) out += ", ";
    out += name.column;
  });
  return out;
}

}  // namespace

const std::string& RunColumns() {
  static const std::string columns =
      ColumnList<RunRecord>([](auto& r, auto&& visit) { ForEachRunField(r, visit); });
  return columns;
}

const std::string& ArtifactColumns() {
  static const std::string columns =
      ColumnList<ArtifactMeta>([](auto& m, auto&& visit) { ForEachArtifactField(m, visit); });
  return columns;
}

const std::string& EventColumns() {
  static const std::string columns =
      ColumnList<TraceEventRecord>([](auto& e, auto&& visit) { ForEachEventField(e, visit); });
  return columns;
}

const std::string& TombstoneColumns() {
  static const std::string columns =
      ColumnList<RunTombstone>([](auto& t, auto&& visit) { ForEachTombstoneField(t, visit); });
  return columns;
}

void EncodeRun(const RunRecord& run, RowWriter& row) { ForEachRunField(run, Encoder{row}); }

void EncodeArtifactMeta(const ArtifactMeta& meta, RowWriter& row) { ForEachArtifactField(meta, Encoder{row}); }

void EncodeEvent(const TraceEventRecord& event, RowWriter& row) { ForEachEventField(event, Encoder{row}); }

Result<RunRecord> DecodeRun(const RowReader& row, int first) {
  RunRecord run;
  auto decoder = MakeDecoder(row, first, "runs", [&] { return run.run_id; });
  ForEachRunField(run, decoder);
  TELIC_RETURN_IF_ERROR(decoder.status);
  return run;
}

Result<ArtifactMeta> DecodeArtifactMeta(const RowReader& row, int first) {
  ArtifactMeta meta;
  auto decoder = MakeDecoder(row, first, "artifacts", [&] { return meta.run_id + "/" + meta.id; });
  ForEachArtifactField(meta, decoder);
  TELIC_RETURN_IF_ERROR(decoder.status);
  return meta;
}

Result<TraceEventRecord> DecodeEvent(const RowReader& row, int first) {
  TraceEventRecord event;
  auto decoder = MakeDecoder(row, first, "trace_events", [&] { return fmt::format("{}/{}", event.run_id, event.sequence); });
  ForEachEventField(event, decoder);
  TELIC_RETURN_IF_ERROR(decoder.status);
  return event;
}

Result<RunTombstone> DecodeTombstone(const RowReader& row, int first) {
  RunTombstone tombstone;
  auto decoder = MakeDecoder(row, first, "run_tombstones", [&] { return std::to_string(tombstone.seq); });
  ForEachTombstoneField(tombstone, decoder);
  TELIC_RETURN_IF_ERROR(decoder.status);
  return tombstone;
}

Json RunRecordJson(const RunRecord& run, std::span<const std::string_view> omit) {
  Json out = Json::object();
  ForEachRunField(run, JsonWriter{out, omit});
  return out;
}

Json ArtifactMetaJson(const ArtifactMeta& meta, std::span<const std::string_view> omit) {
  Json out = Json::object();
  ForEachArtifactField(meta, JsonWriter{out, omit});
  return out;
}

Result<RefusedCall> DecodeRefusedCall(std::string_view run_id, const RowReader& row) {
  RefusedCall call;
  call.run_id = std::string(run_id);
  TELIC_ASSIGN_OR_RETURN(call.seq, DecodeIntColumn(row, 0, "refused_calls", fmt::format("of run {}", run_id), "seq"));
  const std::string key = fmt::format("({}, {})", run_id, call.seq);
  call.at = row.Text(1);
  call.tool = row.Text(2);
  call.code = row.Text(3);
  call.error = row.Text(4);
  call.issues = Json::parse(row.Text(5), nullptr, false);
  if (call.issues.is_discarded() || !call.issues.is_array()) {
    return Fail(ErrorCode::kDataLoss, fmt::format("refused_calls row {}: issues_json is not a JSON array", key));
  }
  TELIC_ASSIGN_OR_RETURN(call.run_version, DecodeIntColumn(row, 6, "refused_calls", key, "run_version"));
  return call;
}

Result<int64_t> DecodeIntColumn(const RowReader& row, int column, std::string_view table, std::string_view key,
                                std::string_view column_name) {
  std::optional<int64_t> value = row.Int(column);
  if (!value) {
    return Fail(ErrorCode::kDataLoss, fmt::format("{} row {}: {} is not an integer", table, key, column_name));
  }
  return *value;
}

}  // namespace telic::store
