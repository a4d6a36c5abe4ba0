// A temporary directory removed when the object goes out of scope (tests only).
#pragma once

#include <filesystem>
#include <string>

#include "base/ids.h"

namespace telic::testing {

class TempDir {
 public:
  TempDir() : path_(std::filesystem::temp_directory_path() / ("telic-test-" + RandomHex(8))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace telic::testing
