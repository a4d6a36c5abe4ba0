#include "ui/html.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

namespace telic::ui {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kArtifactScheme = "artifact://";

// Length of the valid UTF-8 sequence at text[i], or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  unsigned char d = byte(i + 1);
  if (c == 0xE0 && d < 0xA0) return 0;  // overlong
  if (c == 0xED && d >= 0xA0) return 0;  // surrogate
  if (c == 0xF0 && d < 0x90) return 0;  // overlong
  if (c == 0xF4 && d >= 0x90) return 0;  // beyond U+10FFFF
  return n;
}

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// The characters of a ReferenceUri after its scheme (schemas/common.json).
bool IsReferenceChar(char c) {
  return IsUnreserved(static_cast<unsigned char>(c)) || std::string_view("!$&'()*+,;=:@%/").find(c) != std::string_view::npos;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendPrettyJson(const Json& value, int depth, Html& out) {
  std::string indent(static_cast<size_t>(depth) * 2, ' ');
  std::string inner(static_cast<size_t>(depth + 1) * 2, ' ');
  if (value.is_object()) {
    if (value.empty()) {
      out.Raw("{}");
      return;
    }
    std::vector<std::string> keys;
    for (auto it = value.begin(); it != value.end(); ++it) keys.push_back(it.key());
    std::sort(keys.begin(), keys.end(), Utf16Less);
    out.Raw("{\n");
    for (size_t i = 0; i < keys.size(); ++i) {
      std::string key;
      AppendJsonString(keys[i], key);
      out.Raw(inner).Element("span", {{"class", "jk"}}, key).Raw(": ");
      AppendPrettyJson(value[keys[i]], depth + 1, out);
      out.Raw(i + 1 < keys.size() ? ",\n" : "\n");
    }
    out.Raw(indent).Raw("}");
  } else if (value.is_array()) {
    if (value.empty()) {
      out.Raw("[]");
      return;
    }
    out.Raw("[\n");
    for (size_t i = 0; i < value.size(); ++i) {
      out.Raw(inner);
      AppendPrettyJson(value[i], depth + 1, out);
      out.Raw(i + 1 < value.size() ? ",\n" : "\n");
    }
    out.Raw(indent).Raw("]");
  } else if (value.is_string()) {
    std::string literal;
    AppendJsonString(value.get_ref<const std::string&>(), literal);
    out.Open("span", {{"class", "js"}}).TextWithLinks(literal).Close("span");
  } else if (value.is_number_float()) {
    out.Element("span", {{"class", "jn"}}, FormatJsNumber(value.get<double>()));
  } else if (value.is_number()) {
    out.Element("span", {{"class", "jn"}}, value.dump());
  } else {
    out.Element("span", {{"class", "jl"}}, value.dump());  // true, false, null
  }
}

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; ++i; continue;
      case '<': out += "&lt;"; ++i; continue;
      case '>': out += "&gt;"; ++i; continue;
      case '"': out += "&quot;"; ++i; continue;
      case '\'': out += "&#39;"; ++i; continue;
      case '\0': out += kReplacement; ++i; continue;
      default: break;
    }
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

std::string EncodeComponent(std::string_view text) {
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c)) {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string DecodeComponent(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 && HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string RunsPath() { return "/ui/"; }
std::string RunPath(std::string_view run_id) { return "/ui/runs/" + EncodeComponent(run_id); }
std::string ArtifactPath(std::string_view run_id, std::string_view artifact_id) {
  return RunPath(run_id) + "/artifacts/" + EncodeComponent(artifact_id);
}
std::string TasksPath(const std::optional<std::string>& run_id) {
  return run_id ? RunPath(*run_id) + "/tasks" : std::string("/ui/tasks");
}
std::string LivePath(std::string_view run_id) { return "/ui/api/runs/" + EncodeComponent(run_id) + "/live"; }
std::string AssetPath(std::string_view name) { return "/ui/assets/" + EncodeComponent(name); }

std::optional<ArtifactRef> ParseArtifactUri(std::string_view uri) {
  if (!uri.starts_with(kArtifactScheme)) return std::nullopt;
  std::string_view rest = uri.substr(kArtifactScheme.size());
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) return std::nullopt;
  return ArtifactRef{std::string(rest.substr(0, slash)), std::string(rest.substr(slash + 1))};
}

Html& Html::Text(std::string_view text) {
  out_ += Escape(text);
  return *this;
}

Html& Html::Open(std::string_view tag, const Attrs& attrs) {
  out_ += '<';
  out_ += tag;
  for (const auto& [name, value] : attrs) {
    out_ += ' ';
    out_ += name;
    out_ += "=\"";
    out_ += Escape(value);
    out_ += '"';
  }
  out_ += '>';
  return *this;
}

Html& Html::Close(std::string_view tag) {
  out_ += "</";
  out_ += tag;
  out_ += '>';
  return *this;
}

Html& Html::Element(std::string_view tag, const Attrs& attrs, std::string_view text) {
  return Open(tag, attrs).Text(text).Close(tag);
}

Html& Html::Link(const std::string& path, std::string_view text, const Attrs& attrs) {
  Attrs all = {{"href", path}};
  all.insert(all.end(), attrs.begin(), attrs.end());
  return Element("a", all, text);
}

Html& Html::TextWithLinks(std::string_view text, std::string_view short_run) {
  size_t done = 0;
  while (true) {
    size_t at = text.find(kArtifactScheme, done);
    if (at == std::string_view::npos) break;
    size_t end = at + kArtifactScheme.size();
    while (end < text.size() && IsReferenceChar(text[end])) ++end;
    // Prose often ends a reference with punctuation that is not part of it.
    while (end > at + kArtifactScheme.size() && std::string_view(".,;:)'!").find(text[end - 1]) != std::string_view::npos) {
      --end;
    }
    std::string_view uri = text.substr(at, end - at);
    auto ref = ParseArtifactUri(uri);
    Text(text.substr(done, at - done));
    if (ref && !short_run.empty() && ref->run_id == short_run) {
      Link(ArtifactPath(ref->run_id, ref->artifact_id), ShortId(ref->artifact_id), {{"class", "ref"}, {"title", std::string(uri)}});
    } else if (ref) {
      Link(ArtifactPath(ref->run_id, ref->artifact_id), uri, {{"class", "ref"}});
    } else {
      Text(uri);
    }
    done = end;
  }
  return Text(text.substr(done));
}

std::string PrettyJsonHtml(const Json& value) {
  Html out;
  AppendPrettyJson(value, 0, out);
  return out.Take();
}

std::optional<int64_t> ParseIsoMillis(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fff]Z
  if (text.size() < 20 || text.back() != 'Z') return std::nullopt;
  std::string copy(text);
  int year, month, day, hour, minute, second;
  char t;
  int consumed = 0;
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &year, &month, &day, &t, &hour, &minute, &second,
                  &consumed) != 7 ||
      (t != 'T' && t != 't') || consumed != 19) {
    return std::nullopt;
  }
  int64_t millis = 0;
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty()) {
    if (rest.front() != '.' || rest.size() < 2) return std::nullopt;
    int64_t scale = 100;
    for (char c : rest.substr(1)) {
      if (c < '0' || c > '9') return std::nullopt;
      millis += (c - '0') * scale;
      scale /= 10;
    }
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + millis;
}

std::string FormatDuration(int64_t millis) {
  if (millis < 0) millis = 0;
  if (millis < 1000) return fmt::format("{} ms", millis);
  if (millis < 60'000) return fmt::format("{:.1f} s", static_cast<double>(millis) / 1000.0);
  int64_t s = millis / 1000;
  if (s < 3600) return fmt::format("{} min {} s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
  return fmt::format("{} d {} h", s / 86400, (s % 86400) / 3600);
}

std::string ShortId(std::string_view id) {
  if (id.size() <= 20) return std::string(id);
  // The head and the tail: ids of one run often share a long prefix
  // ("context-…-source-001-…"), so the end tells them apart.
  auto boundary = [&](size_t at) {  // never split a UTF-8 sequence
    while (at > 0 && at < id.size() && (static_cast<unsigned char>(id[at]) & 0xC0) == 0x80) --at;
    return at;
  };
  size_t head = boundary(10), tail = boundary(id.size() - 6);
  return std::string(id.substr(0, head)) + "\xE2\x80\xA6" + std::string(id.substr(tail));
}

std::string FormatOffset(int64_t millis) { return "+" + FormatDuration(millis); }

std::string FormatAgo(int64_t millis) {
  if (millis < 0) millis = 0;
  int64_t s = millis / 1000;
  if (s < 60) return fmt::format("{} s ago", s);
  if (s < 3600) return fmt::format("{} min ago", s / 60);
  if (s < 86400) return fmt::format("{} h ago", s / 3600);
  return fmt::format("{} d ago", s / 86400);
}

std::string FirstLine(std::string_view text, size_t max_chars) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return "";
  std::string_view line = text.substr(start);
  line = line.substr(0, line.find_first_of("\r\n"));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  size_t chars = 0, i = 0;
  while (i < line.size() && chars < max_chars) {
    size_t n = Utf8SequenceLength(line, i);
    i += n == 0 ? 1 : n;
    ++chars;
  }
  bool cut = i < line.size();
  bool more_lines = start + line.size() < text.size() &&
                    text.substr(start + line.size()).find_first_not_of(" \t\r\n") != std::string_view::npos;
  std::string out(line.substr(0, i));
  if (cut || more_lines) out += "\xE2\x80\xA6";  // …
  return out;
}

}  // namespace telic::ui
