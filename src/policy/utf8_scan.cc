#include "policy/utf8_scan.h"

#include <cstdio>

namespace telic::policy {

bool DecodeUtf8At(std::string_view s, size_t i, char32_t& cp, size_t& length) {
  if (i >= s.size()) return false;
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char lead = byte(0);
  char32_t min = 0;
  if (lead < 0x80) {
    cp = lead;
    length = 1;
    return true;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1F;
    min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0F;
    min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07;
    min = 0x10000;
  } else {
    return false;  // continuation byte, C0/C1 (always overlong) or F5-FF
  }
  if (s.size() - i < length) return false;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (byte(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  return true;
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    char32_t cp;
    size_t length;
    if (!DecodeUtf8At(s, i, cp, length)) return false;
    i += length;
  }
  return true;
}

bool IsInvisibleOrBidi(char32_t cp) {
  return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x061C || cp == 0xFEFF || cp == 0x00AD || cp == 0x180E;
}

std::string CodePointName(char32_t cp) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "U+%04X", static_cast<unsigned>(cp));
  return buffer;
}

}  // namespace telic::policy
