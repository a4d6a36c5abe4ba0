// The registry of embedded schemas, compiled once per process.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "schema/validator.h"

namespace telic::schema {

class Registry {
 public:
  // The process-wide registry of every schema under schemas/; each document
  // is parsed on its first use. Thread-safe.
  static const Registry& Default();

  // The validator for `path` relative to schemas/ (e.g. "tools/telic_get_run.json"),
  // compiled on its first Find and kept (the pointer is stable); a schema that
  // fails to compile aborts with its error (a build defect, caught by the
  // registry's unit test, which finds every path).
  Result<const Validator*> Find(std::string_view path) const;

  // The raw schema document for `path` (stable pointer), or nullptr. A
  // document that does not parse aborts (a build defect, as above).
  const Json* Document(std::string_view path) const;

  // Every embedded path, sorted.
  std::vector<std::string> Paths() const;

  struct Impl;
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

 private:
  Registry();
  Impl* impl_;
};

}  // namespace telic::schema
