// A JSON text writer for the hot response path.
//
// Contract: with the default WriteOrder, Write(value, indent) appends exactly
// the bytes of value.dump(indent, ' ', false, Json::error_handler_t::replace)
// (nlohmann's output: members in map order, i.e. bytewise-sorted keys; raw
// UTF-8; invalid UTF-8 replaced by U+FFFD; controls escaped as \b \f \n \r \t
// or lowercase \u00xx). It differs from dump() only where a WriteOrder says
// so: members of an object written in another order, or a value replaced by
// text the caller precomputed (which must be what dump() would write there).
// It is faster than dump() because strings without anything to escape are
// copied whole and the output buffer is appended to directly.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/canonical_json.h"

namespace telic {

// Chooses member order and precomputed text, per object context. A context
// is an int the order defines; 0 means plain (map order, nothing
// precomputed) and is the context of every array item.
class WriteOrder {
 public:
  virtual ~WriteOrder() = default;
  // Keys written first, in this order, when present; the other members follow
  // in map order.
  virtual std::span<const std::string_view> FirstKeys(int /*context*/) const { return {}; }
  // The context of the value at `key` inside an object of `context`.
  virtual int ChildContext(int /*context*/, std::string_view /*key*/) const { return 0; }
  // Text to write instead of serialising `value` (member `key` of an object
  // of `context`, `depth` levels deep), or nullopt to serialise it.
  virtual std::optional<std::string_view> Precomputed(int /*context*/, std::string_view /*key*/, const Json& /*value*/,
                                                      int /*depth*/) const {
    return std::nullopt;
  }
  // Called right after the text Precomputed just returned was appended, with
  // the offset in the output where it begins.
  virtual void Placed(size_t /*offset*/) const {}
};

// Appends `value` as JSON text; indent < 0 is compact (no whitespace), else
// pretty with that many spaces per level, like Json::dump(indent). `value`
// is in `context` of `order` and `depth` levels deep (pretty indentation).
void WriteJson(const Json& value, int indent, std::string& out, const WriteOrder* order = nullptr, int context = 0,
               int depth = 0);

// Appends `text` as a JSON string literal, byte-identical to Json(text).dump()
// with error_handler_t::replace.
void WriteJsonString(std::string_view text, std::string& out);

}  // namespace telic
