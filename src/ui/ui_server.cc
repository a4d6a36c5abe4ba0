#include "ui/ui_server.h"

#include <charconv>
#include <optional>

#include <httplib.h>

#include "base/ids.h"
#include "schema/embedded.h"
#include "ui/html.h"

namespace telic::ui {
namespace {

constexpr const char* kHtml = "text/html; charset=utf-8";

int HttpStatusOf(const Error& error) {
  switch (error.code()) {
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kInvalidArgument: return 400;
    default: return 500;
  }
}

void SendPage(httplib::Response& res, const Result<std::string>& page) {
  if (page) {
    res.set_content(*page, kHtml);
    return;
  }
  res.status = HttpStatusOf(page.error());
  res.set_content(ErrorPage(res.status, page.error().message()), kHtml);
}

// The ids a URL names must be identifiers (base/ids.h) before anything is
// looked up: otherwise kInvalidArgument (a 400 page) saying which and why.
Status CheckUrlIds(const httplib::Request& req, std::initializer_list<const char*> names) {
  for (size_t i = 0; i < names.size(); ++i) {
    std::string problem = IdentifierProblem(req.matches[i + 1].str());
    if (!problem.empty()) {
      return Fail(ErrorCode::kInvalidArgument, std::string("the ") + names.begin()[i] + " in the URL is not an identifier: " + problem);
    }
  }
  return Ok();
}

std::optional<std::string> Param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) return std::nullopt;
  std::string value = req.get_param_value(name);
  if (value.empty()) return std::nullopt;
  return value;
}

// The runs page's query; kInvalidArgument for a limit that is not 1..kMaxRunsPerPage.
Result<RunsFilter> ParseRunsFilter(const httplib::Request& req) {
  RunsFilter filter;
  filter.status = Param(req, "status");
  filter.mode = Param(req, "mode");
  filter.topology = Param(req, "topology");
  filter.text = Param(req, "q");
  filter.before = Param(req, "before");
  if (auto back = Param(req, "back")) {
    size_t start = 0;
    while (start <= back->size()) {
      size_t comma = back->find(',', start);
      std::string cursor = back->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      filter.back.push_back(cursor == "-" ? "" : cursor);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (filter.back.size() > kMaxBackCursors) {
      return Fail(ErrorCode::kInvalidArgument, "back holds at most " + std::to_string(kMaxBackCursors) + " page cursors");
    }
  }
  if (auto limit = Param(req, "limit")) {
    int value = 0;
    auto [end, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), value);
    if (ec != std::errc() || end != limit->data() + limit->size() || value < 1 || value > kMaxRunsPerPage) {
      return Fail(ErrorCode::kInvalidArgument, "limit must be a number from 1 to " + std::to_string(kMaxRunsPerPage));
    }
    filter.limit = value;
  }
  return filter;
}

// Every handler's body: store errors become error pages, never exceptions.
template <typename F>
httplib::Server::Handler Guarded(F body) {
  return [body](const httplib::Request& req, httplib::Response& res) {
    try {
      body(req, res);
    } catch (const std::exception&) {
      res.status = 500;
      res.set_content(ErrorPage(500, "internal error"), kHtml);
    }
  };
}

// A non-negative decimal query parameter (`fallback` when absent); nullopt
// when present but not one.
std::optional<int64_t> SequenceParam(const httplib::Request& req, const char* name, std::optional<int64_t> fallback) {
  if (!req.has_param(name)) return fallback;
  const std::string text = req.get_param_value(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

void SendJsonError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(Json{{"error", message}}.dump(), "application/json");
}

// GET /ui/api/runs/RUN/live?after=SEQ[&refused=SEQ]: what the run page
// polls (the trace events and refused calls after those sequence numbers).
void ServeLiveUpdate(Sources& sources, const httplib::Request& req, httplib::Response& res) {
  const std::optional<int64_t> after = SequenceParam(req, "after", std::nullopt);
  if (!after) return SendJsonError(res, 400, "after must be a trace sequence number");
  const std::optional<int64_t> refused = SequenceParam(req, "refused", 0);
  if (!refused) return SendJsonError(res, 400, "refused must be a refused-call sequence number");
  auto ids = CheckUrlIds(req, {"run id"});
  auto update = ids ? LiveUpdate(sources, req.matches[1], *after, *refused) : std::unexpected(ids.error());
  if (!update) return SendJsonError(res, HttpStatusOf(update.error()), update.error().message());
  res.set_content(update->dump(), "application/json");
}

void Install(httplib::Server& http, Sources& sources) {
  http.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_redirect(RunsPath()); });
  http.Get("/ui", [](const httplib::Request&, httplib::Response& res) { res.set_redirect(RunsPath()); });
  http.Get("/ui/", Guarded([&sources](const httplib::Request& req, httplib::Response& res) {
    auto filter = ParseRunsFilter(req);
    SendPage(res, filter ? RunsPage(sources, *filter) : Result<std::string>(std::unexpected(filter.error())));
  }));
  http.Get(R"(/ui/runs/([^/]+))", Guarded([&sources](const httplib::Request& req, httplib::Response& res) {
    auto ids = CheckUrlIds(req, {"run id"});
    SendPage(res, ids ? RunPage(sources, req.matches[1]) : std::unexpected(ids.error()));
  }));
  http.Get(R"(/ui/runs/([^/]+)/artifacts/([^/]+))", Guarded([&sources](const httplib::Request& req, httplib::Response& res) {
    auto ids = CheckUrlIds(req, {"run id", "artifact id"});
    SendPage(res, ids ? ArtifactPage(sources, req.matches[1], req.matches[2]) : std::unexpected(ids.error()));
  }));
  http.Get(R"(/ui/runs/([^/]+)/tasks)", Guarded([&sources](const httplib::Request& req, httplib::Response& res) {
    auto ids = CheckUrlIds(req, {"run id"});
    SendPage(res, ids ? TasksPage(sources, std::string(req.matches[1])) : std::unexpected(ids.error()));
  }));
  http.Get("/ui/tasks", Guarded([&sources](const httplib::Request&, httplib::Response& res) {
    SendPage(res, TasksPage(sources, std::nullopt));
  }));
  http.Get(R"(/ui/api/runs/([^/]+)/live)", Guarded([&sources](const httplib::Request& req, httplib::Response& res) {
    ServeLiveUpdate(sources, req, res);
  }));
  http.Get(R"(/ui/assets/([^/]+))", [](const httplib::Request& req, httplib::Response& res) {
    auto asset = FindAsset(req.matches[1].str());
    if (!asset) {
      res.status = 404;
      res.set_content(ErrorPage(404, "No such asset"), kHtml);
      return;
    }
    res.set_content(std::string(asset->content), asset->content_type);
  });
  http.Get(R"(/ui/.*)", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(ErrorPage(404, "No such page"), kHtml);
  });
}

void Decorate(httplib::Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-store");
}

}  // namespace

std::optional<Asset> FindAsset(std::string_view name) {
  for (const auto& file : schema::EmbeddedUiAssets()) {
    if (file.path != name) continue;
    std::string type = name.ends_with(".css") ? "text/css; charset=utf-8"
                       : name.ends_with(".js") ? "text/javascript; charset=utf-8"
                       : name.ends_with(".svg") ? "image/svg+xml"
                                               : "application/octet-stream";
    return Asset{file.content, type};
  }
  return std::nullopt;
}

mcp::HttpMount MakeUiMount(Sources& sources) {
  mcp::HttpMount mount;
  mount.prefix = "/ui";
  mount.name = "Telic UI";
  mount.install = [&sources](httplib::Server& http) { Install(http, sources); };
  mount.decorate = Decorate;
  return mount;
}

}  // namespace telic::ui
