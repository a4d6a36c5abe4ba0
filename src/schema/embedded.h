// Schema files embedded at build time from schemas/ (see cmake/embed_schemas.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace telic::schema {

struct EmbeddedFile {
  std::string_view path;     // relative to schemas/, e.g. "tools/telic_start_run.json"
  std::string_view content;  // the file's bytes
};

const std::vector<EmbeddedFile>& EmbeddedSchemaFiles();

// Example scenarios embedded from examples/ (paths relative to examples/).
const std::vector<EmbeddedFile>& EmbeddedExampleFiles();

// The web UI's stylesheet and script, embedded from src/ui/assets/ (telic ui).
const std::vector<EmbeddedFile>& EmbeddedUiAssets();

}  // namespace telic::schema
