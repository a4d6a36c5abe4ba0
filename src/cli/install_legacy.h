// Installs recorded by an older telic.
//
// An older telic kept its record in <base>/.telic/installs.json, where a
// repository can write anything. Such a record is advisory: it says which host
// was installed and with which binary, nothing more. Uninstall then removes
// only what this telic's plan for that host and binary writes (the same
// paths, confined; a whole file only when its bytes are exactly the plan's;
// only telic's own keys, items or TOML block), never restores a backup, and
// removes only empty folders on the plan's paths (D-S1.2).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cli/install_manifest.h"

namespace telic::cli::install {

struct Legacy {
  fs::path path;         // the manifest inside the scope
  OrderedJson manifest;  // {"hosts": {...}} when readable, else empty
};

// The older record of the scope; empty hosts when absent or unreadable.
Legacy LoadLegacy(const Scope& scope);

bool LegacyHas(const Legacy& legacy, const std::string& host);

// The binary an older install configured ("" when it did not say).
std::string LegacyBinary(const OrderedJson& install);

// Forgets the host in the older record; removes the record when it is empty.
[[nodiscard]] Status ForgetLegacy(const Scope& scope, Legacy& legacy, const std::string& host);

// Takes out what this telic's plan for `host` writes, as the older record
// describes it, and forgets the host there. Refuses a record that names
// anything outside the scope before anything changes.
[[nodiscard]] Status UninstallLegacy(const Scope& scope, const std::string& host, const OrderedJson& manifest,
                                     Legacy& legacy, std::vector<std::string>& notes);

}  // namespace telic::cli::install
