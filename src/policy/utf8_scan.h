// Strict UTF-8 decoding shared by the path, shell and URL checks of the
// permission engine (internal to src/policy).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace telic::policy {

// Decodes the code point starting at s[i]. Returns false for any invalid
// sequence: stray continuation bytes, truncated sequences, overlong forms,
// UTF-16 surrogates and values above U+10FFFF. On success `cp` and `length`
// (1-4 bytes) are set.
bool DecodeUtf8At(std::string_view s, size_t i, char32_t& cp, size_t& length);

// True when every byte sequence of `s` decodes.
bool IsValidUtf8(std::string_view s);

// Zero-width and bidirectional formatting characters (U+200B-200F,
// U+202A-202E, U+2060-2064, U+2066-2069, U+061C, U+FEFF, U+00AD, U+180E):
// invisible in most renderings, so they can disguise a name.
bool IsInvisibleOrBidi(char32_t cp);

// "U+FF1B" for messages.
std::string CodePointName(char32_t cp);

}  // namespace telic::policy
