#include "schema/registry.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "base/json_parse.h"
#include "schema/embedded.h"

namespace telic::schema {

// One embedded schema: its text, parsed on first use, and its validator,
// compiled on the first Find. Parsing all 69 documents took 14.5 M
// instructions and compiling them 36 M, paid by the first call of every
// session, which needs a few.
struct Entry {
  std::string_view content;
  std::once_flag parsed_once;
  std::optional<Json> document;
  std::once_flag compiled_once;
  std::optional<Validator> validator;
};

// Every embedded schema keyed by path relative to schemas/. The map is filled
// by the constructor and never changes shape after it; parsing and compiling
// happen once per entry, from any thread (a parse never waits for another
// entry, so a compile's $ref lookups cannot wait in a cycle).
struct Registry::Impl {
  std::map<std::string, Entry, std::less<>> entries;
};

namespace {

// A build defect: report and stop.
[[noreturn]] void Die(std::string_view path, const Error& error) {
  fmt::print(stderr, "telic: embedded schema {} is invalid: {}\n", path, error.message());
  std::abort();
}

// Collapses "." and ".." segments of a '/'-separated relative path.
std::string NormalizePath(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty()) {
      parts.pop_back();
    } else {
      parts.push_back(part);
    }
  }
  std::string out;
  for (std::string_view part : parts) {
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

// "tools/" for "tools/x.json", "" for "x.json".
std::string_view DirectoryOf(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1);
}

// Resolves a $ref document named from `referrer`: first relative to the
// referrer's directory, then relative to schemas/.
// The parsed document of `entry` (parsed now if it was not yet).
const Json& ParsedDocument(const std::string& path, Entry& entry) {
  std::call_once(entry.parsed_once, [&] {
    auto document = ParseJsonStrict(entry.content);
    if (!document) Die(path, document.error());
    entry.document.emplace(std::move(*document));
  });
  return *entry.document;
}

SchemaResolver MakeResolver(Registry::Impl& impl, std::string referrer) {
  return [&impl, referrer = std::move(referrer)](std::string_view document) -> const Json* {
    for (const std::string& candidate :
         {NormalizePath(std::string(DirectoryOf(referrer)) + std::string(document)), NormalizePath(document)}) {
      auto it = impl.entries.find(candidate);
      if (it != impl.entries.end()) return &ParsedDocument(it->first, it->second);
    }
    return nullptr;
  };
}

}  // namespace

Registry::Registry() : impl_(new Impl) {
  for (const EmbeddedFile& file : EmbeddedSchemaFiles()) {
    impl_->entries.try_emplace(std::string(file.path)).first->second.content = file.content;
  }
}

Registry::~Registry() { delete impl_; }

const Registry& Registry::Default() {
  static const Registry registry;
  return registry;
}

Result<const Validator*> Registry::Find(std::string_view path) const {
  auto it = impl_->entries.find(path);
  if (it == impl_->entries.end()) return Fail(ErrorCode::kNotFound, fmt::format("unknown schema \"{}\"", path));
  Entry& entry = it->second;
  std::call_once(entry.compiled_once, [&] {
    auto validator = Validator::Compile(ParsedDocument(it->first, entry), MakeResolver(*impl_, it->first));
    if (!validator) Die(path, validator.error());
    entry.validator.emplace(std::move(*validator));
  });
  return &*entry.validator;
}

const Json* Registry::Document(std::string_view path) const {
  auto it = impl_->entries.find(path);
  return it == impl_->entries.end() ? nullptr : &ParsedDocument(it->first, it->second);
}

std::vector<std::string> Registry::Paths() const {
  std::vector<std::string> paths;
  for (const auto& [path, entry] : impl_->entries) paths.push_back(path);
  return paths;
}

}  // namespace telic::schema
