// Text helpers shared by validation and error reporting.
#pragma once

#include <string>
#include <string_view>

namespace telic {

// Length in UTF-16 code units (JavaScript `length`) of valid UTF-8 text.
size_t Utf16Length(std::string_view utf8);

// True when `utf8` holds at least one non-whitespace character.
bool HasNonWhitespace(std::string_view utf8);

// Replaces every run of CR, LF and TAB with one space.
std::string CollapseLineBreaks(std::string_view text);

// Cuts `utf8` to at most `max_units` UTF-16 code units without splitting a
// code point.
std::string TruncateUtf16(std::string_view utf8, size_t max_units);

// Trims ASCII and Unicode-agnostic JavaScript whitespace (space, tab, CR, LF,
// VT, FF, NBSP and the U+2000 block are handled as JS String.prototype.trim).
std::string_view TrimJs(std::string_view text);

// `bytes` as lowercase hexadecimal, two digits per byte.
std::string LowerHex(std::string_view bytes);

// A message fit for a tool result: line breaks collapsed, cut to 800 units.
std::string CleanMessage(std::string_view text, size_t max_units = 800);

}  // namespace telic
