#include "schema/registry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/json_parse.h"
#include "schema/embedded.h"

namespace telic::schema {
namespace {

TEST(RegistryTest, EveryEmbeddedSchemaCompiles) {
  const Registry& registry = Registry::Default();  // aborts on a schema that fails to compile
  std::vector<std::string> paths = registry.Paths();
  EXPECT_EQ(paths.size(), EmbeddedSchemaFiles().size());
  EXPECT_TRUE(std::is_sorted(paths.begin(), paths.end()));
  for (const std::string& path : paths) {
    auto validator = registry.Find(path);
    ASSERT_TRUE(validator.has_value()) << path << ": " << validator.error().message();
    EXPECT_NE(*validator, nullptr) << path;
    EXPECT_NE(registry.Document(path), nullptr) << path;
  }
}

TEST(RegistryTest, DocumentsMatchEmbeddedFiles) {
  const Registry& registry = Registry::Default();
  for (const EmbeddedFile& file : EmbeddedSchemaFiles()) {
    auto parsed = ParseJsonStrict(file.content);
    ASSERT_TRUE(parsed.has_value()) << file.path;
    const Json* document = registry.Document(file.path);
    ASSERT_NE(document, nullptr) << file.path;
    EXPECT_EQ(*document, *parsed) << file.path;
    EXPECT_EQ((*registry.Find(file.path))->schema(), *parsed) << file.path;
  }
}

TEST(RegistryTest, FindUnknownIsNotFound) {
  auto missing = Registry::Default().Find("tools/no_such_schema.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("tools/no_such_schema.json"), std::string::npos);
  EXPECT_EQ(Registry::Default().Document("tools/no_such_schema.json"), nullptr);
}

TEST(RegistryTest, DefaultIsOneInstanceWithStableValidators) {
  EXPECT_EQ(&Registry::Default(), &Registry::Default());
  for (const std::string& path : Registry::Default().Paths()) {
    EXPECT_EQ(*Registry::Default().Find(path), *Registry::Default().Find(path)) << path;
  }
}

}  // namespace
}  // namespace telic::schema
