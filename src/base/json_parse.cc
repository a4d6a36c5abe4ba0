#include "base/json_parse.h"

#include <vector>

#include <fmt/format.h>

namespace telic {
namespace {

// Builds a Json value while enforcing duplicate-key and depth limits.
class StrictBuilder : public nlohmann::json_sax<Json> {
 public:
  explicit StrictBuilder(size_t max_depth) : max_depth_(max_depth) {}

  bool null() override { return Put(Json(nullptr)); }
  bool boolean(bool v) override { return Put(Json(v)); }
  bool number_integer(number_integer_t v) override { return Put(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Put(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Put(Json(v)); }
  bool string(string_t& v) override { return Put(Json(std::move(v))); }
  bool binary(binary_t&) override { return Fail("binary values are not JSON"); }

  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool key(string_t& k) override {
    Json& object = *stack_.back();
    if (object.contains(k)) return Fail(fmt::format("duplicate object key \"{}\"", k));
    pending_key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    auto colon = what.rfind(": ");
    error_ = fmt::format("invalid JSON at byte {}: {}", position,
                         colon == std::string::npos ? what : what.substr(colon + 2));
    return false;
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  Json* Insert(Json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    Json& slot = parent[pending_key_];
    slot = std::move(value);
    return &slot;
  }
  bool Put(Json value) {
    Insert(std::move(value));
    return true;
  }
  bool Open(Json container) {
    if (stack_.size() >= max_depth_) return Fail(fmt::format("JSON nesting exceeds depth {}", max_depth_));
    stack_.push_back(Insert(std::move(container)));
    return true;
  }

  size_t max_depth_;
  Json root_;
  std::vector<Json*> stack_;
  std::string pending_key_;
  std::string error_;
};

}  // namespace

Result<Json> ParseJsonStrict(std::string_view text, const ParseLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("JSON input of {} bytes exceeds the {} byte limit", text.size(), limits.max_bytes));
  }
  StrictBuilder builder(limits.max_depth);
  bool ok = Json::sax_parse(text.begin(), text.end(), &builder, nlohmann::detail::input_format_t::json, true);
  if (!ok) {
    return Fail(ErrorCode::kInvalidArgument,
                builder.error().empty() ? std::string("invalid JSON") : builder.error());
  }
  return std::move(builder.root());
}

}  // namespace telic
