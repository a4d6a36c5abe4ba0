#include "policy/capabilities.h"

#include <algorithm>

namespace telic::policy::capabilities {

const CapabilitySpec* FindSpec(std::string_view capability) {
  for (const auto& spec : kSpecs) {
    if (spec.capability == capability) return &spec;
  }
  return nullptr;
}

bool IsLimit(const Json& value) { return value.is_number_integer() && value.get<int64_t>() >= 0; }

FieldView GetField(const Json& set, const char* family, const char* field, FieldType type) {
  FieldView view;
  if (set.is_null()) return view;
  if (!set.is_object()) return {FieldState::kMalformed, nullptr, nullptr};
  auto fam = set.find(family);
  if (fam == set.end()) return view;
  if (!fam->is_object()) return {FieldState::kMalformed, nullptr, nullptr};
  auto it = fam->find(field);
  if (it == fam->end()) return view;
  bool ok = false;
  if (type == FieldType::kList) {
    ok = it->is_array() && std::all_of(it->begin(), it->end(), [](const Json& e) { return e.is_string(); });
  } else {
    ok = it->is_boolean();
    if (type == FieldType::kSubagents) {
      for (const char* limit : {"maximumChildren", "maximumDepth"}) {
        auto l = fam->find(limit);
        if (l != fam->end() && !IsLimit(*l)) ok = false;
      }
    }
  }
  if (!ok) return {FieldState::kMalformed, nullptr, nullptr};
  return {FieldState::kPresent, &*it, &*fam};
}

std::vector<std::string> Strings(const Json* list) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  for (const auto& e : *list) out.push_back(e.get<std::string>());
  return out;
}

int64_t Limit(const Json* family, const char* name) {
  if (family == nullptr) return 0;
  auto it = family->find(name);
  return it != family->end() && IsLimit(*it) ? it->get<int64_t>() : 0;
}

Status CheckServiceName(std::string_view name) {
  auto deny = [](std::string reason) { return Fail(ErrorCode::kPermissionDenied, std::move(reason)); };
  if (name.empty()) return deny("empty service name");
  if (name.size() > 255) return deny("service name longer than 255 characters");
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) return deny("service name must be printable ASCII without spaces");
    if (std::string_view("*?[]{}\\%").find(c) != std::string_view::npos) {
      return deny(std::string("character '") + c + "' not allowed in a service name (names are exact)");
    }
  }
  return Ok();
}

}  // namespace telic::policy::capabilities
