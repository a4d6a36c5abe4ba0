// HTML building for the web UI: every value that reaches a page goes through
// Escape (text and attribute values alike), and links are only ever built
// from paths of this UI with percent-encoded segments, never from stored
// text. Stored text (requests, bodies, summaries, targets) is attacker-
// controlled: it is data, never markup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/canonical_json.h"

namespace telic::ui {

// `text` with & < > " ' replaced by character references; bytes that are not
// valid UTF-8 become U+FFFD. Safe in element content and quoted attributes.
std::string Escape(std::string_view text);

// Percent-encodes everything but RFC 3986 unreserved characters, so the
// result is one path segment or query value whatever `text` holds.
std::string EncodeComponent(std::string_view text);

// Decodes %XX and '+' (as a space) of a query value; bad escapes stay as they are.
std::string DecodeComponent(std::string_view text);

// The UI's own paths (under /ui), segments encoded.
std::string RunsPath();
std::string RunPath(std::string_view run_id);
std::string ArtifactPath(std::string_view run_id, std::string_view artifact_id);
std::string TasksPath(const std::optional<std::string>& run_id);
std::string LivePath(std::string_view run_id);
std::string AssetPath(std::string_view name);

// An artifact:// reference split into run and artifact id.
struct ArtifactRef {
  std::string run_id;
  std::string artifact_id;
};
// "artifact://RUN/ID" → {RUN, ID}; nullopt for anything else.
std::optional<ArtifactRef> ParseArtifactUri(std::string_view uri);

using Attrs = std::vector<std::pair<std::string_view, std::string>>;

// Appends markup; text and attribute values are escaped on the way in.
class Html {
 public:
  // Markup this UI produced itself (never stored text).
  Html& Raw(std::string_view markup) {
    out_ += markup;
    return *this;
  }
  Html& Text(std::string_view text);
  Html& Open(std::string_view tag, const Attrs& attrs = {});
  Html& Close(std::string_view tag);
  // <tag attrs>text</tag>
  Html& Element(std::string_view tag, const Attrs& attrs, std::string_view text);
  // <a href=path>text</a>; `path` must be one of this UI's paths.
  Html& Link(const std::string& path, std::string_view text, const Attrs& attrs = {});
  // `text` with every artifact:// reference in it a link to its page. A
  // reference into run `short_run` shows only its artifact id, shortened by
  // ShortId (the full reference is the link's title).
  Html& TextWithLinks(std::string_view text, std::string_view short_run = {});

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// The JSON value pretty-printed as markup (keys, strings, numbers marked by
// class), with every artifact:// reference inside a string a link.
std::string PrettyJsonHtml(const Json& value);

// Milliseconds since the epoch of an ISO-8601 UTC timestamp
// ("2026-12-02T08:15:53.310Z"); nullopt when it is not one.
std::optional<int64_t> ParseIsoMillis(std::string_view text);
// "850 ms", "12.4 s", "3 min 5 s", "2 h 4 min", "3 d 2 h".
std::string FormatDuration(int64_t millis);

// An id as the viewer shows it in tables: ids of up to 20 bytes as they
// are, longer ones as their first 10 bytes, "…" and their last 6.
std::string ShortId(std::string_view id);

// "+850 ms", "+12.4 s", "+3 min 5 s": `millis` after a starting point.
std::string FormatOffset(int64_t millis);

// How long ago `millis` was, as "12 s ago", "3 min ago", "2 h ago", "4 d ago".
std::string FormatAgo(int64_t millis);

// The first line of `text`, trimmed, cut at `max_chars` code points with "…".
std::string FirstLine(std::string_view text, size_t max_chars = 120);

}  // namespace telic::ui
