#include "cli/suggest.h"

#include <gtest/gtest.h>

namespace telic::cli {
namespace {

const std::vector<std::string> kCommands = {"serve", "mcp", "runs", "show", "status", "trace", "verify", "replay",
                                            "doctor", "install", "uninstall", "export", "import"};

TEST(SuggestTest, EditDistanceCountsOneSwapAsOneEdit) {
  EXPECT_EQ(EditDistance("show", "show"), 0u);
  EXPECT_EQ(EditDistance("shwo", "show"), 1u);
  EXPECT_EQ(EditDistance("serv", "serve"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(SuggestTest, AMisspeltCommandSuggestsTheClosestNames) {
  EXPECT_EQ(Suggestions("shwo", kCommands), std::vector<std::string>{"show"});
  EXPECT_EQ(Suggestions("serv", kCommands), std::vector<std::string>{"serve"});
  EXPECT_EQ(Suggestions("doctr", kCommands), std::vector<std::string>{"doctor"});
  EXPECT_EQ(Suggestions("--jsn", std::vector<std::string>{"--json", "--repo", "--db"}),
            std::vector<std::string>{"--json"});
  // Two at the same distance are both named.
  EXPECT_EQ(Suggestions("rus", kCommands), (std::vector<std::string>{"runs"}));
  EXPECT_EQ(Suggestions("xport", kCommands), (std::vector<std::string>{"export"}));
  EXPECT_EQ(Suggestions("mport", kCommands), (std::vector<std::string>{"import"}));
}

TEST(SuggestTest, APrefixSuggestsTheNamesItStarts) {
  EXPECT_EQ(Suggestions("uninst", kCommands), std::vector<std::string>{"uninstall"});
  EXPECT_EQ(Suggestions("st", kCommands), std::vector<std::string>{"status"});
}

TEST(SuggestTest, NothingCloseSuggestsNothing) {
  EXPECT_TRUE(Suggestions("frobnicate", kCommands).empty());
  EXPECT_TRUE(Suggestions("x", kCommands).empty());
  EXPECT_TRUE(Suggestions("show", kCommands).empty()) << "a known name is no slip";
}

TEST(SuggestTest, DidYouMeanListsTheSuggestions) {
  EXPECT_EQ(DidYouMean({}), "");
  EXPECT_EQ(DidYouMean({"show"}), "; did you mean 'show'?");
  EXPECT_EQ(DidYouMean({"a", "b"}), "; did you mean 'a' or 'b'?");
  EXPECT_EQ(DidYouMean({"a", "b", "c"}), "; did you mean 'a', 'b' or 'c'?");
}

}  // namespace
}  // namespace telic::cli
