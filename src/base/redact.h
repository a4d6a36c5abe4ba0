// Secret redaction for everything telic writes to a trace, a task record or
// an error message: credentials are replaced by "[REDACTED:<category>]"
// before the text is stored or returned. Decisions are always taken on the
// raw text; only what is kept or shown is redacted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace telic {

struct Redacted {
  std::string text;
  // One entry per replaced value, in order of the rules below: "credential"
  // (tokens, keys, passwords, cookies) or "secret" (private key material).
  std::vector<std::string> categories;

  bool changed() const { return !categories.empty(); }
};

// Replaces, in this order (the full table with an example of each is
// redact_test.cc; docs/PERMISSIONS.md "Redaction" lists the families):
//   PEM private key blocks (to the END line, or to the end of cut text)  → secret
//   header values: Authorization / Proxy-Authorization (after the scheme),
//     Cookie / Set-Cookie, X-Api-Key and similar key headers             → credential
//   "Bearer <token>" / "Basic <token>" anywhere                         → credential
//   URL user:password@ passwords, secret-named query parameters          → credential
//   secret-named assignments: *_TOKEN=, *_KEY=, *_SECRET=, PASSWORD=,
//     "api_key": "…", --password=…, --token …, curl -u user:password     → credential
//   well-known token formats: AWS, GitHub, GitLab, Slack, OpenAI,
//     Anthropic, Stripe, Google, npm, PyPI, Hugging Face, SendGrid,
//     DigitalOcean, Docker Hub, Shopify, Vault, Databricks, Telegram, age,
//     Twilio, Atlassian, JWTs, Slack and Discord webhook URLs            → credential
//   base64 (standard or URL-safe) whose decoded text holds any of these  → credential
// Never throws; any byte string is accepted (matching is byte-wise, so
// invalid UTF-8 is fine and a replacement never splits a UTF-8 sequence).
// Idempotent: redacting redacted text changes nothing.
Redacted RedactSecrets(std::string_view text);

// Shorthand: RedactSecrets(text).text.
std::string RedactedText(std::string_view text);

}  // namespace telic
