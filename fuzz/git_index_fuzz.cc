// Fuzzes the direct Git index reader (a grounded repository's .git/index is
// input telic does not control). Invariants: no crash, no read outside the
// input; an accepted index lists entries in which every path is non-empty
// and lies inside the bytes given (v2/v3) or the reader's own arena (v4).
// Each input is parsed as given and again with a zero trailer (git's
// index.skipHash), so the fuzzer reaches the structure checks behind the
// SHA-1 verification.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "grounding/git_index.h"

namespace {

void Check(const std::string& bytes) {
  auto index = telic::grounding::IndexFile::FromBytes(bytes);
  if (!index) {
    if (index.error().message().empty()) std::abort();
    return;
  }
  if (index->version() < 2 || index->version() > 4) std::abort();
  for (size_t i = 0; i < index->size(); ++i) {
    const telic::grounding::IndexEntry entry = index->entry(i);
    if (entry.path.empty() || entry.path != index->path(i) || entry.stage > 3) std::abort();
    volatile char first = entry.path.front();  // touches the bytes (ASan checks them)
    volatile char last = entry.path.back();
    (void)first;
    (void)last;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  Check(bytes);
  if (bytes.size() >= 32) {
    bytes.replace(bytes.size() - 20, 20, std::string(20, '\0'));
    Check(bytes);
  }
  return 0;
}
