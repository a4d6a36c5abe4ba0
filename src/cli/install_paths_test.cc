// Confinement of install paths to their scope (issue 40 rows 1-2).
#include "cli/install_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

namespace telic::cli {
namespace {

namespace fs = std::filesystem;

class InstallPathsTest : public ::testing::Test {
 protected:
  InstallPathsTest() {
    fs::create_directories(dir_.path() / "scope/inner");
    fs::create_directories(dir_.path() / "outside");
    base_ = *RealFolder((dir_.path() / "scope").string(), "scope");
  }
  std::string Refusal(const std::string& relative) {
    auto confined = ConfinePath(base_, relative, "path");
    return confined ? std::string("accepted") : confined.error().message();
  }
  testing::TempDir dir_;
  fs::path base_;
};

TEST_F(InstallPathsTest, PlainRelativePathsStayInside) {
  EXPECT_EQ(*ConfinePath(base_, ".claude/settings.json", "path"), base_ / ".claude/settings.json");
  EXPECT_EQ(*ConfinePath(base_, "inner/new/file", "path"), base_ / "inner/new/file") << "missing components are fine";
}

TEST_F(InstallPathsTest, LexicalEscapesAreRefused) {
  EXPECT_NE(Refusal("").find("empty"), std::string::npos);
  EXPECT_NE(Refusal("/etc/passwd").find("absolute"), std::string::npos);
  EXPECT_NE(Refusal("../outside/v1.txt").find(".. component"), std::string::npos);
  EXPECT_NE(Refusal("inner/../../outside").find(".. component"), std::string::npos);
  EXPECT_NE(Refusal("inner/./x").find(". or .."), std::string::npos);
  EXPECT_NE(Refusal(std::string("a\0b", 3)).find("NUL"), std::string::npos);
}

TEST_F(InstallPathsTest, SymlinksLeavingTheScopeAreRefusedAndInsideOnesFollowed) {
  fs::create_directory_symlink(dir_.path() / "outside", base_ / ".claude");
  fs::create_directory_symlink(base_ / "inner", base_ / "dotfiles");
  fs::create_symlink(dir_.path() / "outside/missing", base_ / "dangling");
  const std::string refusal = Refusal(".claude/settings.json");
  EXPECT_NE(refusal.find("is a symlink to"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("outside the scope"), std::string::npos) << refusal;
  EXPECT_NE(Refusal("dangling").find("does not resolve"), std::string::npos);
  EXPECT_EQ(Refusal("dotfiles/settings.json"), "accepted");
}

TEST_F(InstallPathsTest, RealFolderRefusesFilesAndMissingFolders) {
  std::ofstream(dir_.path() / "file") << "x";
  EXPECT_FALSE(RealFolder((dir_.path() / "file").string(), "root").has_value());
  EXPECT_FALSE(RealFolder((dir_.path() / "nope").string(), "root").has_value());
}

}  // namespace
}  // namespace telic::cli
