#include "ui/dag_layout.h"

#include <gtest/gtest.h>

namespace telic::ui {
namespace {

DagGraph Graph(const std::vector<std::string>& nodes, const std::vector<std::pair<std::string, std::string>>& edges) {
  DagGraph graph;
  for (const auto& id : nodes) graph.nodes.push_back({id, id, "", "", "", ""});
  for (const auto& [from, to] : edges) graph.edges.push_back({from, to, "", ""});
  return graph;
}

TEST(DagLayoutTest, LayersByLongestPath) {
  DagLayout layout = LayoutDag(Graph({"a", "b", "c", "d"}, {{"a", "b"}, {"b", "c"}, {"a", "c"}, {"d", "c"}}));
  EXPECT_EQ(layout.layers, 3);
  EXPECT_EQ(layout.layer, (std::vector<int>{0, 1, 2, 1}));  // d, a source, sits just above its successor
  EXPECT_EQ(layout.reversed, (std::vector<bool>{false, false, false, false}));
}

TEST(DagLayoutTest, BreaksCyclesByReversingBackEdges) {
  DagLayout layout = LayoutDag(Graph({"a", "b", "c"}, {{"a", "b"}, {"b", "c"}, {"c", "a"}}));
  EXPECT_EQ(layout.reversed, (std::vector<bool>{false, false, true}));
  EXPECT_EQ(layout.layer, (std::vector<int>{0, 1, 2}));
}

TEST(DagLayoutTest, BarycenterOrderingRemovesACrossing) {
  // a1 → b2 and a2 → b1 cross when b1 stays left of b2.
  DagLayout layout = LayoutDag(Graph({"a1", "a2", "b1", "b2"}, {{"a1", "b2"}, {"a2", "b1"}}));
  EXPECT_LT(layout.order[0], layout.order[1]);
  EXPECT_LT(layout.order[3], layout.order[2]);
}

TEST(DagLayoutTest, IgnoresEdgesToUnknownNodesAndDrawsSelfLoops) {
  DagGraph graph = Graph({"a", "b"}, {{"a", "b"}, {"a", "ghost"}, {"b", "b"}});
  DagLayout layout = LayoutDag(graph);
  EXPECT_EQ(layout.layers, 2);
  std::string svg = RenderDagSvg(graph, {});
  EXPECT_NE(svg.find("class=\"edge loop "), std::string::npos);
  EXPECT_EQ(svg.find("ghost"), std::string::npos);
}

TEST(DagLayoutTest, SvgEscapesTextAndLinksOnlyToNodePaths) {
  DagGraph graph;
  graph.nodes.push_back({"<x>", "<script>alert(1)</script>", "\"sub\"", "phase", "/ui/runs/r", ""});
  graph.nodes.push_back({"y", "y", "", "phase", "", ""});
  graph.edges.push_back({"<x>", "y", "<b>label</b>", "taken"});
  DagOptions options;
  options.id_prefix = "p";
  std::string svg = RenderDagSvg(graph, options);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("<a href=\"/ui/runs/r\" class=\"nodelink\">"), std::string::npos);
  EXPECT_NE(svg.find("marker-end=\"url(#p-arrow-taken)\""), std::string::npos);
  EXPECT_NE(svg.find("data-from=\"&lt;x&gt;\""), std::string::npos);
  // One anchor: the node without an href is not a link.
  EXPECT_EQ(svg.find("<a ", svg.find("<a ") + 1), std::string::npos);
}

TEST(DagLayoutTest, SameGraphSameBytesAndNodesDoNotOverlap) {
  DagGraph graph = Graph({"r", "a", "b", "c", "d", "e"}, {{"r", "a"}, {"r", "b"}, {"r", "c"}, {"a", "d"}, {"c", "d"}, {"b", "e"}});
  EXPECT_EQ(RenderDagSvg(graph, {}), RenderDagSvg(graph, {}));
  DagLayout layout = LayoutDag(graph);
  // Within a layer, positions are distinct.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (size_t j = i + 1; j < graph.nodes.size(); ++j) {
      if (layout.layer[i] == layout.layer[j]) {
        EXPECT_NE(layout.order[i], layout.order[j]) << i << " " << j;
      }
    }
  }
  // Rendered x of the rects: none of the three in layer 1 overlaps another.
  std::string svg = RenderDagSvg(graph, {});
  std::vector<double> xs;
  for (size_t at = svg.find("<rect x=\""); at != std::string::npos; at = svg.find("<rect x=\"", at + 1)) {
    xs.push_back(std::stod(svg.substr(at + 9)));
  }
  ASSERT_EQ(xs.size(), 6u);
  DagOptions defaults;
  std::vector<double> layer1 = {xs[1], xs[2], xs[3]};
  std::sort(layer1.begin(), layer1.end());
  EXPECT_GE(layer1[1] - layer1[0], defaults.node_width + defaults.node_gap - 0.5);
  EXPECT_GE(layer1[2] - layer1[1], defaults.node_width + defaults.node_gap - 0.5);
}

}  // namespace
}  // namespace telic::ui
