#include <chrono>

#include <fmt/format.h>

#include "mcp/server.h"
#include "ui/html.h"
#include "ui/pages.h"

namespace telic::ui {

int64_t Sources::Now() const {
  if (now_ms) return now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string PageShell(std::string_view title, const std::string& body) {
  Html out;
  out.Raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
  out.Raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
  out.Element("title", {}, std::string(title) + " · telic");
  out.Open("link", {{"rel", "icon"}, {"href", AssetPath("favicon.svg")}, {"type", "image/svg+xml"}});
  out.Open("link", {{"rel", "stylesheet"}, {"href", AssetPath("ui.css")}});
  out.Open("script", {{"src", AssetPath("ui.js")}, {"defer", "defer"}}).Close("script");
  out.Raw("</head><body><header class=\"top\">");
  out.Link(RunsPath(), "telic", {{"class", "brand"}});
  out.Raw("<nav>");
  out.Link(RunsPath(), "Runs");
  out.Link(TasksPath(std::nullopt), "Standalone tasks");
  out.Raw("</nav>");
  out.Element("span", {{"class", "muted"}}, fmt::format("v{} · read-only", mcp::kServerVersion));
  out.Raw("</header><main>");
  out.Raw(body);
  out.Raw("</main></body></html>\n");
  return out.Take();
}

std::string ErrorPage(int status, std::string_view message) {
  Html body;
  body.Element("h1", {}, fmt::format("{} {}", status, status == 404 ? "Not found" : status == 400 ? "Bad request" : "Error"));
  body.Element("p", {{"class", "card"}, {"id", "error"}}, message);
  body.Open("p").Link(RunsPath(), "All runs").Close("p");
  return PageShell("Error", body.Take());
}

}  // namespace telic::ui
