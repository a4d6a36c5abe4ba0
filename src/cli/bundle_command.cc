#include "cli/bundle_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/text.h"
#include "cli/format.h"
#include "cli/otlp_export.h"
#include "controller/run_bundle.h"

namespace telic::cli {
namespace {

// Writes all of `bytes` to `fd` and syncs it; false on any failure (errno set).
bool WriteAllAndSync(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return ::fsync(fd) == 0;
}

// Writes `bytes` to `path` owner-only so that a reader never sees half a
// bundle and a killed export leaves nothing behind: the bytes go to an
// unnamed file (O_TMPFILE) in the destination's folder, which gets a name
// only once complete (a temporary name renamed into place at once). Where
// the file system has no O_TMPFILE, a named temporary file is used instead.
Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  std::string temp = path + ".tmp-" + std::to_string(::getpid());
  std::string folder = std::filesystem::path(path).parent_path().string();
  int fd = ::open(folder.empty() ? "." : folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  bool unnamed = fd >= 0;
  if (!unnamed) fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  bool ok = WriteAllAndSync(fd, bytes);
  if (ok && unnamed) {
    std::string self = "/proc/self/fd/" + std::to_string(fd);
    ok = ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) == 0;
  }
  std::string why = ok ? "" : std::strerror(errno);
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(temp.c_str(), path.c_str()) == 0) return Ok();
  if (why.empty()) why = std::strerror(errno);
  ::unlink(temp.c_str());
  return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot write {}: {}", path, why));
}

Result<std::string> ReadBundleFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Fail(ErrorCode::kNotFound, fmt::format("bundle {} is not a readable file", path));
  }
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size > controller::kMaxBundleBytes) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("bundle {} is larger than the 1 GiB limit", path));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot read bundle {}", path));
  return bytes;
}

// The parsed and checked bundle, or the report saying why not.
struct CheckedBundle {
  std::optional<controller::RunBundle> bundle;
  Json report;
};

CheckedBundle Check(const std::string& bytes, const std::string& state_dir) {
  auto parsed = controller::ParseBundle(bytes);
  if (!parsed) {
    return {std::nullopt, Json{{"ok", false}, {"problems", Json::array({parsed.error().message()})}}};
  }
  Json report = controller::CheckBundle(*parsed, state_dir);
  return {std::move(*parsed), std::move(report)};
}

void PrintReport(const Json& report, bool json, std::ostream& out) {
  if (json) {
    out << TerminalJson(report) << "\n";
    return;
  }
  if (report.contains("runId")) {
    const Json provenance = report.value("evidenceProvenance", Json::object());
    out << fmt::format("{}: bundle {} — {} artifacts ({} evidence observed by telic, {} claimed by the host), {} trace "
                       "events, final trace hash {}{}\n",
                       TerminalText(report["runId"].get<std::string>()),
                       TerminalText(report["bundleDigest"].get<std::string>()), report["artifacts"].get<size_t>(),
                       provenance.value("observed", 0), provenance.value("claimed", 0),
                       report["traceEvents"].get<size_t>(), TerminalText(report["finalTraceHash"].get<std::string>()),
                       report["ok"].get<bool>() ? ", no problems" : "");
  }
  for (const Json& p : report["problems"]) out << "  problem: " << TerminalText(CleanMessage(p.get<std::string>())) << "\n";
}

}  // namespace

void DefineExportOptions(CLI::App& sub, BundleCommands& c) {
  sub.add_option("RUN_ID", c.run_id, "the run (its id or a unique prefix)")->required();
  auto* output = sub.add_option("-o,--output", c.output, "write to FILE (owner-only) instead of stdout");
  c.otlp = sub.add_option("--otlp", c.otlp_url,
                          "OpenTelemetry instead: POST OTLP/HTTP JSON to URL (e.g. http://127.0.0.1:4318/v1/traces), "
                          "or print it when no URL is given")
               ->expected(0, 1);
  sub.add_flag("--allow-remote", c.allow_remote, "let --otlp send to a host that is not loopback")->needs(c.otlp);
  c.otlp->excludes(output);
}

void DefineImportOptions(CLI::App& sub, BundleCommands& c) {
  sub.add_option("FILE", c.file, "the bundle file")->required();
}

int RunExport(const BundleCommands& c, controller::RunService& service, std::ostream& out, std::ostream& err) {
  if (c.otlp->count() > 0) return RunOtlpExport(service, c.run_id, c.otlp_url, c.allow_remote, out, err);
  auto bytes = controller::ExportBundle(service, c.run_id);
  if (!bytes) return ReportFailure(err, bytes.error());
  if (c.output.empty()) {
    out << *bytes << std::flush;
    return 0;
  }
  if (auto written = WriteFileAtomically(c.output, *bytes); !written) return ReportFailure(err, written.error());
  return 0;
}

int RunImport(const BundleCommands& c, store::Store& store, const std::string& state_dir,
              const std::function<void(const std::string&)>& imported, bool json, std::ostream& out, std::ostream& err) {
  auto bytes = ReadBundleFile(c.file);
  if (!bytes) return ReportFailure(err, bytes.error());
  CheckedBundle checked = Check(*bytes, state_dir);
  if (!checked.report["ok"].get<bool>()) {
    err << "telic: the bundle was not imported (nothing was written):\n";
    PrintReport(checked.report, false, err);
    return 1;
  }
  if (auto loaded = controller::ImportBundle(store, *checked.bundle); !loaded) {
    if (loaded.error().code() == ErrorCode::kAlreadyExists) {
      return ReportFailure(err, Error(ErrorCode::kAlreadyExists,
                                fmt::format("Run {} already exists in this ledger; the bundle was not imported",
                                            checked.bundle->run.run_id)));
    }
    return ReportFailure(err, loaded.error());
  }
  if (imported) imported(checked.bundle->run.run_id);
  if (json) {
    out << TerminalJson(Json{{"imported", checked.report}}) << "\n";
  } else {
    out << "imported ";
    PrintReport(checked.report, false, out);
  }
  return 0;
}

int RunVerifyBundle(const std::string& file, const std::string& state_dir, bool json, std::ostream& out,
                    std::ostream& err) {
  auto bytes = ReadBundleFile(file);
  if (!bytes) return ReportFailure(err, bytes.error());
  CheckedBundle checked = Check(*bytes, state_dir);
  PrintReport(checked.report, json, out);
  return checked.report["ok"].get<bool>() ? 0 : 1;
}

}  // namespace telic::cli
