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

// A parsed document and its validator, compiled on the first Find.
struct CompiledOnce {
  std::once_flag once;
  std::optional<Validator> validator;
};

// Parsed documents and their validators, keyed by path relative to schemas/.
// Both maps are filled by the constructor and never change shape after it;
// a validator is compiled once, on its first Find, from any thread.
struct Registry::Impl {
  std::map<std::string, Json, std::less<>> documents;
  std::map<std::string, CompiledOnce, std::less<>> validators;
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
SchemaResolver MakeResolver(const Registry::Impl& impl, std::string referrer) {
  return [&impl, referrer = std::move(referrer)](std::string_view document) -> const Json* {
    for (const std::string& candidate :
         {NormalizePath(std::string(DirectoryOf(referrer)) + std::string(document)), NormalizePath(document)}) {
      auto it = impl.documents.find(candidate);
      if (it != impl.documents.end()) return &it->second;
    }
    return nullptr;
  };
}

}  // namespace

Registry::Registry() : impl_(new Impl) {
  for (const EmbeddedFile& file : EmbeddedSchemaFiles()) {
    auto document = ParseJsonStrict(file.content);
    if (!document) Die(file.path, document.error());
    impl_->documents.emplace(std::string(file.path), std::move(*document));
  }
  // Compiling every schema took 36 M instructions, paid by the first
  // tools/list or tool call of every session; most sessions use a few.
  for (const auto& [path, document] : impl_->documents) impl_->validators.try_emplace(path);
}

Registry::~Registry() { delete impl_; }

const Registry& Registry::Default() {
  static const Registry registry;
  return registry;
}

Result<const Validator*> Registry::Find(std::string_view path) const {
  auto it = impl_->validators.find(path);
  if (it == impl_->validators.end()) return Fail(ErrorCode::kNotFound, fmt::format("unknown schema \"{}\"", path));
  CompiledOnce& entry = it->second;
  std::call_once(entry.once, [&] {
    const Json& document = impl_->documents.find(path)->second;
    auto validator = Validator::Compile(document, MakeResolver(*impl_, it->first));
    if (!validator) Die(path, validator.error());
    entry.validator.emplace(std::move(*validator));
  });
  return &*entry.validator;
}

const Json* Registry::Document(std::string_view path) const {
  auto it = impl_->documents.find(path);
  return it == impl_->documents.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Paths() const {
  std::vector<std::string> paths;
  for (const auto& [path, document] : impl_->documents) paths.push_back(path);
  return paths;
}

}  // namespace telic::schema
