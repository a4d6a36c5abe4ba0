// Canonical JSON: the byte form every digest in telic is computed over.
//
// Contract (wire-compatible with the reference implementation): object keys
// sorted by UTF-16 code-unit order, arrays in order, no whitespace, strings
// escaped like JavaScript JSON.stringify (only `"`, `\` and control
// characters; \b \f \n \r \t short forms, other controls as lowercase \u00xx;
// non-ASCII emitted as raw UTF-8), numbers formatted like JavaScript's
// Number-to-String (shortest round trip, exponent form at >= 1e21 and < 1e-6,
// -0 as 0).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace telic {

using Json = nlohmann::json;

std::string CanonicalJson(const Json& value);
void AppendCanonicalJson(const Json& value, std::string& out);

// JavaScript Number.prototype.toString for a finite double; NaN and the
// infinities give "null", as JSON.stringify writes them.
std::string FormatJsNumber(double value);

// Appends `text` as a JSON string literal escaped the JSON.stringify way.
void AppendJsonString(std::string_view text, std::string& out);

// True when `a` sorts before `b` comparing UTF-16 code units.
bool Utf16Less(std::string_view a, std::string_view b);

}  // namespace telic
