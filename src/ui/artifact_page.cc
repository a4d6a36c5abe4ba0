#include <fmt/format.h>

#include "base/json_parse.h"
#include "base/redact.h"
#include "store/records.h"
#include "ui/html.h"
#include "ui/pages.h"

namespace telic::ui {
namespace {

void MetaList(Html& out, const store::ArtifactMeta& meta) {
  out.Open("dl", {{"class", "kv"}});
  out.Element("dt", {}, "type").Element("dd", {{"id", "artifact-type"}}, std::string(domain::Name(meta.type)));
  out.Element("dt", {}, "producer").Element("dd", {}, meta.producer);
  out.Element("dt", {}, "schema").Element("dd", {}, meta.schema_version);
  out.Element("dt", {}, "sha256").Element("dd", {{"class", "mono"}, {"id", "artifact-sha256"}}, meta.sha256);
  out.Element("dt", {}, "created").Element("dd", {{"class", "mono"}}, meta.created_at);
  out.Element("dt", {}, "redaction").Element("dd", {}, meta.redaction);
  out.Element("dt", {}, "source refs").Open("dd", {{"id", "source-refs"}});
  for (size_t i = 0; i < meta.source_refs.size(); ++i) {
    if (i) out.Raw(", ");
    out.TextWithLinks(meta.source_refs[i]);
  }
  if (meta.source_refs.empty()) out.Text("none");
  out.Close("dd").Close("dl");
}

}  // namespace

Result<std::string> ArtifactPage(Sources& sources, const std::string& run_id, const std::string& artifact_id) {
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, sources.runs.ListArtifacts(run_id));
  auto meta = std::find_if(artifacts.begin(), artifacts.end(), [&](const auto& a) { return a.id == artifact_id; });
  if (meta == artifacts.end()) return Fail(ErrorCode::kNotFound, fmt::format("Artifact not found: {}", artifact_id));
  // The store re-hashes the body on every read: kDataLoss when it no longer matches.
  Result<store::StoredArtifact> artifact = sources.runs.GetArtifact(run_id, artifact_id);
  if (!artifact && artifact.error().code() != ErrorCode::kDataLoss) return std::unexpected(artifact.error());

  Html out;
  out.Open("p").Link(RunPath(run_id), "← run " + run_id, {{"id", "run-link"}}).Close("p");
  out.Open("h1").Text(std::string(domain::Name(meta->type)) + " ").Element("span", {{"class", "mono"}, {"id", "artifact-id"}}, artifact_id).Close("h1");
  out.Open("section", {{"class", "card"}});
  out.Open("p", {{"id", "integrity"}});
  if (artifact) {
    out.Element("span", {{"class", "check-ok"}, {"data-ok", "true"}}, "✔ verified on this read")
        .Text(": the canonical body's sha256 equals the stored digest");
  } else {
    out.Element("span", {{"class", "check-bad"}, {"data-ok", "false"}}, "✘ integrity check failed").Text(": " + artifact.error().message());
  }
  out.Close("p");
  MetaList(out, *meta);
  out.Close("section");
  if (artifact) {
    out.Element("h2", {}, "Canonical body");
    Json body = ParseStoredJson(artifact->canonical_body).value_or(Json(Json::value_t::discarded));
    if (body.is_discarded()) {
      out.Element("pre", {{"class", "json"}, {"id", "body"}}, RedactedText(artifact->canonical_body));
      return PageShell(std::string(domain::Name(meta->type)) + " " + artifact_id, out.Take());
    }
    // Likely credentials are masked here; the digest above is of the exact bytes.
    Json shown = store::RedactedJson(body);
    if (shown != body) {
      out.Element("p", {{"class", "muted"}, {"id", "masked"}},
                  "Values that look like credentials are shown as [REDACTED:…]; the stored bytes are unchanged "
                  "(telic artifact --reveal prints them).");
    }
    out.Open("pre", {{"class", "json"}, {"id", "body"}}).Raw(PrettyJsonHtml(shown)).Close("pre");
  }
  return PageShell(std::string(domain::Name(meta->type)) + " " + artifact_id, out.Take());
}

}  // namespace telic::ui
