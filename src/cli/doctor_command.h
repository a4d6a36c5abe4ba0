// `telic doctor`: whether this repository, its state and ledger, git and
// the hosts `telic install` set up are in order. Human output by default,
// the report as JSON with --json; exit 1 when a check fails.
#pragma once

#include <string>

#include "base/canonical_json.h"
#include "cli/ledger_context.h"
#include "cli/terminal.h"

namespace telic::cli {

// The report: {"ok", "version", "checks": {"repository", "ledger", "git",
// "hosts"}} (docs/CLI.md). `self` is this executable, which installs must
// name to be current.
Json DoctorReport(const LedgerFlags& flags, const std::string& self);

// The report for a person: one line per check, marked ✓ (passed), ✗
// (failed) or - (informational), the hosts after, and a closing verdict.
std::string FormatDoctor(const Json& report, bool color);

int Doctor(const LedgerFlags& flags, const std::string& self, const Terminal& terminal);

}  // namespace telic::cli
