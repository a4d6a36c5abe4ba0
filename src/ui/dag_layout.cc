#include "ui/dag_layout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "ui/html.h"

namespace telic::ui {
namespace {

constexpr int kMargin = 16;
constexpr double kDummyWidth = 14;
constexpr int kSweeps = 6;

struct Edge {
  int from = 0;
  int to = 0;
  size_t index = 0;  // into graph.edges
};

// The graph's edges between known nodes, and its self-loops.
struct Indexed {
  std::map<std::string, int, std::less<>> ids;
  std::vector<Edge> edges;
  std::vector<size_t> self_loops;
};

Indexed IndexGraph(const DagGraph& graph) {
  Indexed out;
  for (size_t i = 0; i < graph.nodes.size(); ++i) out.ids.emplace(graph.nodes[i].id, static_cast<int>(i));
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    auto from = out.ids.find(graph.edges[e].from);
    auto to = out.ids.find(graph.edges[e].to);
    if (from == out.ids.end() || to == out.ids.end()) continue;
    if (from->second == to->second) {
      out.self_loops.push_back(e);
    } else {
      out.edges.push_back({from->second, to->second, e});
    }
  }
  return out;
}

// Marks the edges that close a cycle in a depth-first search from each node
// in input order (iterative: graphs can hold thousands of nodes).
std::vector<bool> BackEdges(int n, const std::vector<Edge>& edges) {
  std::vector<std::vector<size_t>> out(static_cast<size_t>(n));
  for (size_t e = 0; e < edges.size(); ++e) out[static_cast<size_t>(edges[e].from)].push_back(e);
  std::vector<int> state(static_cast<size_t>(n), 0);  // 0 new, 1 on the stack, 2 done
  std::vector<bool> back(edges.size(), false);
  for (int root = 0; root < n; ++root) {
    if (state[static_cast<size_t>(root)] != 0) continue;
    std::vector<std::pair<int, size_t>> stack = {{root, 0}};
    state[static_cast<size_t>(root)] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const auto& outs = out[static_cast<size_t>(node)];
      if (next == outs.size()) {
        state[static_cast<size_t>(node)] = 2;
        stack.pop_back();
        continue;
      }
      size_t e = outs[next++];
      int to = edges[e].to;
      if (state[static_cast<size_t>(to)] == 1) {
        back[e] = true;
      } else if (state[static_cast<size_t>(to)] == 0) {
        state[static_cast<size_t>(to)] = 1;
        stack.push_back({to, 0});
      }
    }
  }
  return back;
}

// Longest-path layers of the acyclic orientation; a source is then moved
// down to just above its nearest successor.
std::vector<int> Layers(int n, const std::vector<std::pair<int, int>>& dag) {
  std::vector<int> indegree(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> succ(static_cast<size_t>(n));
  for (auto [a, b] : dag) {
    succ[static_cast<size_t>(a)].push_back(b);
    ++indegree[static_cast<size_t>(b)];
  }
  std::vector<int> layer(static_cast<size_t>(n), 0);
  std::vector<int> queue;
  for (int i = 0; i < n; ++i) {
    if (indegree[static_cast<size_t>(i)] == 0) queue.push_back(i);
  }
  std::vector<int> remaining = indegree;
  for (size_t head = 0; head < queue.size(); ++head) {
    int a = queue[head];
    for (int b : succ[static_cast<size_t>(a)]) {
      layer[static_cast<size_t>(b)] = std::max(layer[static_cast<size_t>(b)], layer[static_cast<size_t>(a)] + 1);
      if (--remaining[static_cast<size_t>(b)] == 0) queue.push_back(b);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (indegree[static_cast<size_t>(i)] != 0 || succ[static_cast<size_t>(i)].empty()) continue;
    int nearest = INT32_MAX;
    for (int b : succ[static_cast<size_t>(i)]) nearest = std::min(nearest, layer[static_cast<size_t>(b)]);
    layer[static_cast<size_t>(i)] = std::max(0, nearest - 1);
  }
  return layer;
}

// The layered graph: real nodes 0..n-1, then dummy points on long edges.
struct Layered {
  int real = 0;
  std::vector<int> layer;                  // per vertex
  std::vector<std::vector<int>> rows;      // vertices per layer, in order
  std::vector<std::vector<int>> up, down;  // neighbours in the adjacent layers
  struct Route {
    size_t edge;             // into graph.edges
    std::vector<int> chain;  // top vertex first, through the dummies
    bool reversed;
  };
  std::vector<Route> routes;
  std::vector<double> x;
};

int AddVertex(Layered& g, int layer) {
  g.layer.push_back(layer);
  g.up.emplace_back();
  g.down.emplace_back();
  return static_cast<int>(g.layer.size()) - 1;
}

Layered BuildLayered(int n, const Indexed& indexed, const std::vector<bool>& back) {
  std::vector<std::pair<int, int>> dag;
  for (size_t e = 0; e < indexed.edges.size(); ++e) {
    const Edge& edge = indexed.edges[e];
    dag.push_back(back[e] ? std::make_pair(edge.to, edge.from) : std::make_pair(edge.from, edge.to));
  }
  Layered g;
  g.real = n;
  for (int layer : Layers(n, dag)) AddVertex(g, layer);
  for (size_t e = 0; e < dag.size(); ++e) {
    auto [a, b] = dag[e];
    Layered::Route route{indexed.edges[e].index, {a}, back[e]};
    for (int l = g.layer[static_cast<size_t>(a)] + 1; l < g.layer[static_cast<size_t>(b)]; ++l) {
      route.chain.push_back(AddVertex(g, l));
    }
    route.chain.push_back(b);
    for (size_t k = 0; k + 1 < route.chain.size(); ++k) {
      g.down[static_cast<size_t>(route.chain[k])].push_back(route.chain[k + 1]);
      g.up[static_cast<size_t>(route.chain[k + 1])].push_back(route.chain[k]);
    }
    g.routes.push_back(std::move(route));
  }
  int layers = 0;
  for (int l : g.layer) layers = std::max(layers, l + 1);
  g.rows.assign(static_cast<size_t>(layers), {});
  for (size_t v = 0; v < g.layer.size(); ++v) g.rows[static_cast<size_t>(g.layer[v])].push_back(static_cast<int>(v));
  return g;
}

// Reorders one row by the barycenter of each vertex's neighbours in the
// row above (downward) or below; vertices without neighbours keep their place.
void SortRow(Layered& g, size_t row, bool downward, std::vector<double>& position) {
  auto& vertices = g.rows[row];
  std::vector<std::pair<double, int>> keyed;
  for (size_t i = 0; i < vertices.size(); ++i) {
    int v = vertices[i];
    const auto& neighbours = downward ? g.up[static_cast<size_t>(v)] : g.down[static_cast<size_t>(v)];
    double key = static_cast<double>(i);
    if (!neighbours.empty()) {
      double sum = 0;
      for (int u : neighbours) sum += position[static_cast<size_t>(u)];
      key = sum / static_cast<double>(neighbours.size());
    }
    keyed.push_back({key, v});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < keyed.size(); ++i) {
    vertices[i] = keyed[i].second;
    position[static_cast<size_t>(keyed[i].second)] = static_cast<double>(i);
  }
}

void OrderRows(Layered& g) {
  std::vector<double> position(g.layer.size(), 0);
  for (const auto& row : g.rows) {
    for (size_t i = 0; i < row.size(); ++i) position[static_cast<size_t>(row[i])] = static_cast<double>(i);
  }
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    for (size_t r = 1; r < g.rows.size(); ++r) SortRow(g, r, true, position);
    for (size_t r = g.rows.size(); r-- > 1;) SortRow(g, r - 1, false, position);
  }
  for (size_t r = 1; r < g.rows.size(); ++r) SortRow(g, r, true, position);
}

double WidthOf(const Layered& g, int v, const DagOptions& options) {
  return v < g.real ? options.node_width : kDummyWidth;
}

// Places each row with its minimum separations, then pulls vertices toward
// the mean x of their neighbours (a left and a right packing, averaged, so
// the separations still hold).
void PlaceX(Layered& g, const DagOptions& options) {
  g.x.assign(g.layer.size(), 0);
  double widest = 0;
  std::vector<double> row_width(g.rows.size(), 0);
  for (size_t r = 0; r < g.rows.size(); ++r) {
    double w = 0;
    for (int v : g.rows[r]) w += WidthOf(g, v, options) + options.node_gap;
    row_width[r] = w;
    widest = std::max(widest, w);
  }
  for (size_t r = 0; r < g.rows.size(); ++r) {
    double at = (widest - row_width[r]) / 2;
    for (int v : g.rows[r]) {
      double w = WidthOf(g, v, options);
      g.x[static_cast<size_t>(v)] = at + w / 2;
      at += w + options.node_gap;
    }
  }
  auto separation = [&](int a, int b) {
    return (WidthOf(g, a, options) + WidthOf(g, b, options)) / 2 + options.node_gap;
  };
  auto relax = [&](size_t r, bool use_up) {
    const auto& row = g.rows[r];
    if (row.empty()) return;
    std::vector<double> want(row.size());
    for (size_t i = 0; i < row.size(); ++i) {
      const auto& nb = use_up ? g.up[static_cast<size_t>(row[i])] : g.down[static_cast<size_t>(row[i])];
      if (nb.empty()) {
        want[i] = g.x[static_cast<size_t>(row[i])];
        continue;
      }
      double sum = 0;
      for (int u : nb) sum += g.x[static_cast<size_t>(u)];
      want[i] = sum / static_cast<double>(nb.size());
    }
    std::vector<double> left(row.size()), right(row.size());
    for (size_t i = 0; i < row.size(); ++i) {
      left[i] = i == 0 ? want[i] : std::max(want[i], left[i - 1] + separation(row[i - 1], row[i]));
    }
    for (size_t i = row.size(); i-- > 0;) {
      right[i] = i + 1 == row.size() ? want[i] : std::min(want[i], right[i + 1] - separation(row[i], row[i + 1]));
    }
    for (size_t i = 0; i < row.size(); ++i) g.x[static_cast<size_t>(row[i])] = (left[i] + right[i]) / 2;
  };
  for (int pass = 0; pass < 4; ++pass) {
    for (size_t r = 1; r < g.rows.size(); ++r) relax(r, true);
    for (size_t r = g.rows.size(); r-- > 1;) relax(r - 1, false);
  }
  double min_left = 0;
  bool first = true;
  for (size_t v = 0; v < g.x.size(); ++v) {
    double left = g.x[v] - WidthOf(g, static_cast<int>(v), options) / 2;
    min_left = first ? left : std::min(min_left, left);
    first = false;
  }
  for (double& x : g.x) x += kMargin - min_left;
}

std::string Fit(const std::string& text, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (chars == max_chars) return out + "\xE2\x80\xA6";
    out.append(text, i, n);
    i += n;
    ++chars;
  }
  return out;
}

std::string Num(double v) { return fmt::format("{:.1f}", v); }

// The arrowhead variant an edge's first class picks.
std::string MarkerOf(const DagOptions& options, const std::string& css_class) {
  std::string first = css_class.substr(0, css_class.find(' '));
  std::string variant = first == "taken" || first == "extra" ? "-" + first : "";
  return fmt::format("url(#{}-arrow{})", options.id_prefix, variant);
}

}  // namespace

DagLayout LayoutDag(const DagGraph& graph) {
  Indexed indexed = IndexGraph(graph);
  int n = static_cast<int>(graph.nodes.size());
  std::vector<bool> back = BackEdges(n, indexed.edges);
  Layered g = BuildLayered(n, indexed, back);
  OrderRows(g);
  DagLayout out;
  out.layer.assign(g.layer.begin(), g.layer.begin() + n);
  out.order.assign(static_cast<size_t>(n), 0);
  for (const auto& row : g.rows) {
    int position = 0;
    for (int v : row) {
      if (v < n) out.order[static_cast<size_t>(v)] = position++;
    }
  }
  out.reversed.assign(graph.edges.size(), false);
  for (size_t e = 0; e < indexed.edges.size(); ++e) out.reversed[indexed.edges[e].index] = back[e];
  out.layers = static_cast<int>(g.rows.size());
  return out;
}

namespace {

// A laid-out graph and the geometry every drawing step shares.
struct Drawing {
  const DagGraph& graph;
  const DagOptions& options;
  const Layered& g;
  const Indexed& indexed;

  double Height() const { return options.node_height; }
  double CenterY(int v) const {
    return kMargin + g.layer[static_cast<size_t>(v)] * (Height() + options.layer_gap) + Height() / 2;
  }
  double X(int v) const { return g.x[static_cast<size_t>(v)]; }
};

void OpenSvg(const Drawing& d, Html& out) {
  double width = 2 * kMargin, height = 2 * kMargin;
  for (size_t v = 0; v < d.g.x.size(); ++v) {
    width = std::max(width, d.g.x[v] + WidthOf(d.g, static_cast<int>(v), d.options) / 2 + kMargin + 40);
    height = std::max(height, d.CenterY(static_cast<int>(v)) + d.Height() / 2 + kMargin);
  }
  out.Open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"class", "dag"},
                   {"viewBox", fmt::format("0 0 {} {}", Num(width), Num(height))},
                   {"width", Num(width)},
                   {"height", Num(height)},
                   {"role", "img"},
                   {"aria-label", d.options.aria_label}});
  out.Raw("<defs>");
  for (std::string variant : {"", "-taken", "-extra"}) {
    out.Open("marker", {{"id", d.options.id_prefix + "-arrow" + variant},
                        {"viewBox", "0 0 10 10"},
                        {"refX", "9"},
                        {"refY", "5"},
                        {"markerWidth", "7"},
                        {"markerHeight", "7"},
                        {"orient", "auto"}});
    out.Open("path", {{"d", "M0,0L10,5L0,10z"}, {"class", "arrowhead" + variant}}).Close("path");
    out.Close("marker");
  }
  out.Raw("</defs>");
}

// The points an edge's route passes, from the bottom of its first node to
// the top of its last (a reversed back edge shifted right and drawn upward).
std::vector<std::pair<double, double>> RoutePoints(const Drawing& d, const Layered::Route& route) {
  std::vector<std::pair<double, double>> points;
  const double shift = route.reversed ? d.options.node_width / 5.0 : 0;
  for (size_t k = 0; k < route.chain.size(); ++k) {
    const int v = route.chain[k];
    double y = d.CenterY(v);
    if (k == 0) y += d.Height() / 2;
    if (k + 1 == route.chain.size()) y -= d.Height() / 2;
    points.push_back({d.X(v) + shift, y});
  }
  if (route.reversed) std::reverse(points.begin(), points.end());
  return points;
}

void DrawEdge(const Drawing& d, const Layered::Route& route, Html& out) {
  const DagEdge& edge = d.graph.edges[route.edge];
  const std::vector<std::pair<double, double>> points = RoutePoints(d, route);
  std::string path = fmt::format("M{},{}", Num(points[0].first), Num(points[0].second));
  for (size_t k = 1; k < points.size(); ++k) {
    auto [px, py] = points[k - 1];
    auto [qx, qy] = points[k];
    double mid = (qy - py) / 2;
    path += fmt::format(" C{},{} {},{} {},{}", Num(px), Num(py + mid), Num(qx), Num(qy - mid), Num(qx), Num(qy));
  }
  std::string cls = "edge " + edge.css_class + (route.reversed ? " back" : "");
  out.Open("g", {{"class", cls}, {"data-from", edge.from}, {"data-to", edge.to}});
  if (!edge.label.empty()) out.Element("title", {}, edge.from + " \xE2\x86\x92 " + edge.to + ": " + edge.label);
  out.Open("path", {{"d", path}, {"marker-end", MarkerOf(d.options, edge.css_class)}}).Close("path");
  if (!edge.label.empty() && d.options.edge_labels) {
    auto [lx, ly] = points[points.size() / 2];
    if (points.size() == 2) {
      lx = (points[0].first + points[1].first) / 2;
      ly = (points[0].second + points[1].second) / 2;
    }
    out.Element("text", {{"class", "elabel"}, {"x", Num(lx + 5)}, {"y", Num(ly + 4)}}, Fit(edge.label, 28));
  }
  out.Close("g");
}

void DrawSelfLoop(const Drawing& d, const DagEdge& edge, Html& out) {
  const int v = d.indexed.ids.find(edge.from)->second;
  const double right = d.X(v) + d.options.node_width / 2.0;
  const double y = d.CenterY(v);
  std::string path = fmt::format("M{},{} C{},{} {},{} {},{}", Num(right), Num(y - 8), Num(right + 34), Num(y - 24),
                                 Num(right + 34), Num(y + 24), Num(right), Num(y + 8));
  out.Open("g", {{"class", "edge loop " + edge.css_class}, {"data-from", edge.from}, {"data-to", edge.to}});
  if (!edge.label.empty()) out.Element("title", {}, edge.from + " \xE2\x86\xBB " + edge.label);
  out.Open("path", {{"d", path}, {"marker-end", MarkerOf(d.options, edge.css_class)}}).Close("path");
  out.Close("g");
}

// Edges first (the taken path last, so it is drawn on top), then self loops.
void DrawEdges(const Drawing& d, Html& out) {
  std::vector<size_t> draw_order(d.g.routes.size());
  std::iota(draw_order.begin(), draw_order.end(), 0);
  std::stable_sort(draw_order.begin(), draw_order.end(), [&](size_t a, size_t b) {
    auto taken = [&](size_t r) { return d.graph.edges[d.g.routes[r].edge].css_class.starts_with("taken"); };
    return !taken(a) && taken(b);
  });
  out.Raw("<g class=\"edges\">");
  for (size_t r : draw_order) DrawEdge(d, d.g.routes[r], out);
  for (size_t e : d.indexed.self_loops) DrawSelfLoop(d, d.graph.edges[e], out);
  out.Raw("</g>");
}

void DrawNodes(const Drawing& d, Html& out) {
  out.Raw("<g class=\"nodes\">");
  const double h = d.Height();
  const size_t title_chars = static_cast<size_t>(std::max(4.0, (d.options.node_width - 14) / 6.8));
  const size_t subtitle_chars = static_cast<size_t>(std::max(4.0, (d.options.node_width - 14) / 5.9));
  for (size_t v = 0; v < d.graph.nodes.size(); ++v) {
    const DagNode& node = d.graph.nodes[v];
    const double cx = d.X(static_cast<int>(v)), cy = d.CenterY(static_cast<int>(v));
    if (!node.href.empty()) out.Open("a", {{"href", node.href}, {"class", "nodelink"}});
    out.Open("g", {{"class", "node " + node.css_class}, {"data-id", node.id}});
    std::string tooltip = node.tooltip.empty() ? node.title + (node.subtitle.empty() ? "" : "\n" + node.subtitle) : node.tooltip;
    out.Element("title", {}, tooltip);
    out.Open("rect", {{"x", Num(cx - d.options.node_width / 2.0)},
                      {"y", Num(cy - h / 2)},
                      {"width", std::to_string(d.options.node_width)},
                      {"height", Num(h)},
                      {"rx", "7"}})
        .Close("rect");
    const bool two = !node.subtitle.empty();
    out.Element("text", {{"class", "t"}, {"x", Num(cx)}, {"y", Num(two ? cy - 3 : cy + 4)}}, Fit(node.title, title_chars));
    if (two) out.Element("text", {{"class", "s"}, {"x", Num(cx)}, {"y", Num(cy + 12)}}, Fit(node.subtitle, subtitle_chars));
    out.Close("g");
    if (!node.href.empty()) out.Close("a");
  }
  out.Raw("</g>");
}

}  // namespace

std::string RenderDagSvg(const DagGraph& graph, const DagOptions& options) {
  const Indexed indexed = IndexGraph(graph);
  const int n = static_cast<int>(graph.nodes.size());
  Layered g = BuildLayered(n, indexed, BackEdges(n, indexed.edges));
  OrderRows(g);
  PlaceX(g, options);
  const Drawing drawing{graph, options, g, indexed};
  Html out;
  OpenSvg(drawing, out);
  DrawEdges(drawing, out);
  DrawNodes(drawing, out);
  out.Raw("</svg>");
  return out.Take();
}

}  // namespace telic::ui
