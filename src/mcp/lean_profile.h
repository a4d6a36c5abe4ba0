// The lean profile (issue 39): tool results that cost a host model a fraction
// of the default profile's tokens, with the same paths for the fields a host
// drives a run with (docs/API.md "Profiles", docs/DECISIONS.md D-C2).
//
// In it, a NextAction names each artifact schema by reference
// {uri: "schema://TYPE", digest: "sha256:..."} (resources/read of the uri or
// telic_get_schema return the full schema) and carries the compact shape
// (schema/compact_shape.h) of a type only in the result of the state change
// that first offers it in the run: the types the new action offers that the
// answered action did not, and of which the run stores no artifact yet. That
// is a function of the two stored states, so every instance and session gives
// the same bytes for the same call. A shape lists only the definitions that
// are not in the shape glossary, which telic_start_run's NextAction carries
// (`shapeGlossary`). A state change reports the run's state
// fields and the members of the run record that changed, and leaves out of
// the new NextAction the members equal to the answered action's (named in its
// `unchanged`; telic_get_next_action has them all) and what the result's run
// already says (createdAt = run.updatedAt; a stored artifact's runId);
// telic_get_run returns
// the run, a page of the artifact index ({id, type}, bodies on request) and
// a summary of the NextAction (id, kind, phase, requiredOutputType, status,
// reportRef, clarificationRequestRef). A list of references that all name
// artifacts of the run ("artifact://RUN/ID") is sent as their IDs (inputIds,
// sourceIds, replay step rows); artifact bodies are never rewritten.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_service.h"

namespace telic::mcp {

enum class Profile { kDefault, kLean };

// "default" or "lean"; nullopt for any other name.
std::optional<Profile> ProfileNamed(std::string_view name);
std::string_view ProfileName(Profile profile);

// The capability key a client declares at initialize to choose a profile:
// params.capabilities.experimental["telic/profile"] = {"name": "lean"}.
inline constexpr const char* kProfileCapability = "telic/profile";
// The profile `params` (of initialize) asks for; nullopt when it asks for
// none or names an unknown one (the server's profile then applies).
std::optional<Profile> ProfileRequestedAt(const Json& params);

// The profile of the request this thread is handling (set by the server
// around each request); kDefault outside one.
Profile CurrentProfile();
class ProfileScope {
 public:
  explicit ProfileScope(Profile profile);
  ~ProfileScope();
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  Profile previous_;
};

// Set by a transport that serves several sessions through one server (HTTP)
// around each request of a session: the profile that session asked for at
// initialize (nullopt: none). Without one, the server is one session (stdio)
// and keeps what initialize asked for itself.
class SessionProfileScope {
 public:
  explicit SessionProfileScope(std::optional<Profile> requested);
  ~SessionProfileScope();
  SessionProfileScope(const SessionProfileScope&) = delete;
  SessionProfileScope& operator=(const SessionProfileScope&) = delete;
  // Whether a transport set one on this thread, and what it holds.
  static bool Active();
  static std::optional<Profile> Requested();

 private:
  bool previous_active_;
  std::optional<Profile> previous_;
};

// "schema://TYPE": the resource of artifact TYPE's full served schema.
std::string SchemaUri(std::string_view type);
// The artifact type a "schema://TYPE" uri names, or nullopt.
std::optional<std::string> SchemaUriType(std::string_view uri);
// "sha256:" and the first kSchemaDigestHexDigits hex digits of the sha256 of
// a served schema's compact text: a version tag a host can compare (a schema
// changes only with telic's version), at an eighth of a full digest's tokens.
inline constexpr size_t kSchemaDigestHexDigits = 8;
std::string SchemaDigest(std::string_view schema_text);
// {uri, digest} of artifact `type`'s served schema; fails for an unknown type.
[[nodiscard]] Result<Json> SchemaReference(std::string_view type);

// What a lean state-changing result is computed against: the run before the
// call. Empty for telic_start_run.
struct LeanBefore {
  Json run;                          // RunToJson of the run before, or null
  Json action;                       // the answered NextAction, or null
  std::set<std::string> offered;     // types the answered action offered
  std::set<std::string> stored;      // types of the artifacts stored before
};
// The state before a call of `tool` with `arguments`, for a state-changing
// run tool in the lean profile; nullopt otherwise (or when the run cannot be
// read: the call then answers with its own error).
std::optional<LeanBefore> LeanStateBefore(controller::RunService& service, const std::string& tool,
                                          const Json& arguments);

// Rewrites the success fields (without `ok`) of `tool` for the lean profile.
// `before` is LeanStateBefore's answer for a state-changing call.
[[nodiscard]] Result<Json> LeanPayload(const std::string& tool, Json payload, const std::optional<LeanBefore>& before);

}  // namespace telic::mcp
