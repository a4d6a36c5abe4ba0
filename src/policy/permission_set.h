// Capabilities, intent-mode ceilings and the wire PermissionSet
// (PROTOCOL §12.1-12.4). The full action-level engine builds on these.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "domain/vocabulary.h"

namespace telic::policy {

// The twelve capability names of the wire contract, in declaration order.
const std::vector<std::string>& Capabilities();
bool IsCapability(std::string_view name);

// The five intent modes.
const std::vector<std::string>& Modes();
bool IsMode(std::string_view name);

// Capabilities granted when telic_start_run omits authorization_granted.
std::vector<std::string> DefaultGrantsForMode(std::string_view mode);

// The PermissionSet with every list empty, booleans false and numbers 0.
Json EmptyPermissionSet();

// Maps capabilities to a PermissionSet (PROTOCOL §12.2). For a granted set, shell.execute
// becomes the allowlist (first-seen order, de-duplicated) and network.read the
// given normalised domains; for a denied set (`denied` true) both become ["**"].
Json CapabilitiesToPermissionSet(const std::vector<std::string>& capabilities,
                                 const std::vector<std::string>& shell_allowlist, bool denied,
                                 const std::vector<std::string>& network_domains = {});

// Whether the intent mode's ceiling allows a capability kind at all (PROTOCOL §12.3).
// Kinds are the capability names, with runtime.restart spelled runtime.mutate.
// Whether `mode` may change the repository (fix_only, analyze_and_fix).
bool ModeFixes(domain::Mode mode);
bool ModeAllows(std::string_view mode, std::string_view kind);

// Effective run permissions: mode ceiling ∩ granted, with any denied entry of
// a family removing that family (PROTOCOL §12.4).
Json EffectiveRunPermissions(std::string_view mode, const Json& granted, const Json& denied);

// Domain normalisation (PROTOCOL §12.5): trimmed, lowercase, <= 253 chars; IP literals
// (brackets stripped) and localhost accepted; otherwise dot-separated labels
// of 1-63 [a-z0-9-] not starting or ending with '-'. nullopt when invalid.
std::optional<std::string> NormalizeNetworkReadDomain(std::string_view value);

// An exact, non-compound shell command for an allowlist: not "authorized" or
// "**", and free of * ? [ ] ; & | > < ` CR LF and "$(".
bool IsExactShellCommand(std::string_view command);

}  // namespace telic::policy
