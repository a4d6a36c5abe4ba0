// A layered (Sugiyama-style) drawing of a directed graph as SVG, done here
// without Graphviz: cycles are broken by reversing the back edges of a
// depth-first search, nodes are layered by longest path, edges that span
// several layers run through dummy points, the order within each layer is
// improved by barycenter sweeps, and x positions are pulled toward the
// mean of each node's neighbours. Deterministic: the same graph gives the
// same bytes.
#pragma once

#include <string>
#include <vector>

namespace telic::ui {

struct DagNode {
  std::string id;
  std::string title;     // first line (cut to fit; the full text is the tooltip)
  std::string subtitle;  // second line, smaller
  std::string css_class;  // e.g. "phase current"
  std::string href;       // a path of this UI, or "" for no link
  std::string tooltip;    // <title>; defaults to title + subtitle
};

struct DagEdge {
  std::string from;
  std::string to;
  std::string label;
  // Space-separated classes; a first class of "taken" or "extra" picks the
  // matching arrowhead.
  std::string css_class;
};

struct DagGraph {
  std::vector<DagNode> nodes;
  std::vector<DagEdge> edges;  // edges naming unknown nodes are ignored
};

struct DagOptions {
  std::string id_prefix = "g";  // unique per page: marker ids are "<prefix>-arrow..."
  std::string aria_label;
  int node_width = 168;
  int node_height = 42;
  int layer_gap = 54;
  int node_gap = 22;
  // Draw each edge's label beside it; false keeps it only as the edge's
  // tooltip (labels of a dense graph would overlap).
  bool edge_labels = true;
};

// Where the layout put things (for tests): per node its layer (0 = top) and
// position within the layer; per edge whether it was reversed to break a
// cycle (drawn against the layering).
struct DagLayout {
  std::vector<int> layer;
  std::vector<int> order;
  std::vector<bool> reversed;
  int layers = 0;
};

DagLayout LayoutDag(const DagGraph& graph);

// The graph as one <svg> element (escaped; links only to node.href).
std::string RenderDagSvg(const DagGraph& graph, const DagOptions& options);

}  // namespace telic::ui
