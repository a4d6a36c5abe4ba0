// The written results of the two read tools hosts call most,
// telic_get_run and telic_get_next_action (issue 18 target 1).
//
// A result is kept with the RunStamp it was computed from (the run's record
// and its artifact count, controller/run_service.h) and sent again, with the
// new request's id, while the run's stamp is unchanged: building the payload
// tree (~25 KB, the NextAction with its served schemas) and writing it twice
// (pretty text, compact structuredContent) is then skipped. Every call still
// reads the run's record, so a write by this or any other process (a new
// version, a new artifact) is seen at once. Errors are never kept.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "base/canonical_json.h"
#include "controller/run_service.h"

namespace telic::mcp {

class ReadResultCache {
 public:
  // At most this many results (one per tool and run) are kept; beyond, the
  // cache starts again empty (about 80 KB each: ~2.5 MB at the most).
  static constexpr size_t kMaxEntries = 32;

  // The run whose result may be kept: `tool` is one of the two read tools
  // and `arguments` is exactly {"run_id": string}; nullptr otherwise.
  static const std::string* CacheableRun(const std::string& tool, const Json* arguments);

  // The kept result body (mcp::ToolResultBody) of `tool` for `run_id` when it
  // was computed from `stamp`; nullptr otherwise. Thread-safe.
  std::shared_ptr<const std::string> Find(const std::string& tool, const std::string& run_id,
                                          const controller::RunStamp& stamp) const;
  // Keeps `body`, computed from `stamp` or a later state of the run. Thread-safe.
  void Keep(const std::string& tool, const std::string& run_id, controller::RunStamp stamp, std::string body);

 private:
  struct Entry {
    controller::RunStamp stamp;
    std::shared_ptr<const std::string> body;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, Entry> entries_;  // (tool, run id)
};

}  // namespace telic::mcp
