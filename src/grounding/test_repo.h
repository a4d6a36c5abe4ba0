// Helpers for grounding tests: generated repositories (tests only).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace telic::grounding::testing {

namespace fs = std::filesystem;

// Writes `content` to root/path, creating parent folders.
inline void WriteFile(const fs::path& root, const std::string& path, const std::string& content) {
  fs::path target = root / path;
  fs::create_directories(target.parent_path());
  std::ofstream out(target, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

// Runs `git <args>` in `root` with the user's configuration shut out and a
// fixed identity; fails the test on a non-zero exit.
inline void Git(const fs::path& root, const std::string& args) {
  std::string command = "cd '" + root.string() +
                        "' && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null GIT_CONFIG_NOSYSTEM=1 "
                        "git -c user.name=telic -c user.email=telic@example.invalid -c init.defaultBranch=main "
                        "-c core.autocrlf=false " +
                        args + " >/dev/null 2>&1";
  int status = std::system(command.c_str());
  ASSERT_EQ(status, 0) << command;
}

// git init (+ add --all with `add`).
inline void GitInit(const fs::path& root, bool add = true) {
  Git(root, "init -q .");
  if (add) Git(root, "add --all");
}

inline void GitCommitAll(const fs::path& root, const std::string& message = "commit") {
  Git(root, "add --all");
  Git(root, "commit -q -m '" + message + "'");
}

}  // namespace telic::grounding::testing
