/**
 * Writes the visualisation page (docs/method.md §7.5): one self-contained HTML file with the
 * vis-network standalone build and the graph data inlined, working offline.
 *
 * Injection safety: the data is JSON inside a <script type="application/json"> element with
 * `<`, `>`, `&`, U+2028 and U+2029 written as \u escapes, so no document text can close the
 * element or open markup; the page sets every label, tooltip and legend entry as text
 * (textContent / text nodes), never as HTML.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { NodeType } from '../model/types.js';

const TYPE_COLOURS: Record<NodeType, string> = {
  entity: '#ADD8E6',
  attribute: '#FFD700',
  relationship: '#FF7F50',
  high_level_element: '#98FB98',
  high_level_element_title: '#FFB6C1',
  semantic_unit: '#D8BFD8',
  text: '#D3D3D3',
};

interface VisNode {
  id: string;
  type: NodeType;
  text: string;
  score: number;
}

interface VisEdge {
  source: string;
  target: string;
  weight: number;
}

interface VisPage {
  title: string;
  nodes: VisNode[];
  edges: VisEdge[];
}

const TOOLTIP_CHARS = 1000;

/** The first `max` characters (code points: an emoji is never cut in half) and "…", or `text`. */
function truncateChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}…`;
}

/** JSON that is safe inside a <script> element and inside JS string contexts. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function escapeHtmlText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

let cachedLibrary: string | undefined;
function visNetworkSource(): string {
  if (cachedLibrary === undefined) {
    const require = createRequire(import.meta.url);
    const file = require.resolve('vis-network/standalone/umd/vis-network.min.js');
    // The library never contains "</script", but make sure an update cannot break the page.
    cachedLibrary = readFileSync(file, 'utf8').replace(/<\/script/gi, '<\\/script');
  }
  return cachedLibrary;
}

export function renderGraphHtml(page: VisPage): string {
  // A loop, not Math.max(...scores): spreading 200,000 arguments overflows the stack.
  let max = 1e-12;
  for (const n of page.nodes) if (n.score > max) max = n.score;
  const data = {
    nodes: page.nodes.map((n) => ({
      id: n.id,
      type: n.type,
      tip: `${n.type}\n${truncateChars(n.text, TOOLTIP_CHARS)}`,
      size: 10 + (30 * n.score) / max,
      color: TYPE_COLOURS[n.type],
    })),
    edges: page.edges.map((e) => ({ from: e.source, to: e.target, weight: e.weight })),
    colours: TYPE_COLOURS,
  };
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtmlText(page.title)}</title>
<style>
  html, body { margin: 0; height: 100%; background: #15171c; color: #e6e6e6; font: 13px system-ui, sans-serif; }
  #graph { position: absolute; inset: 0; }
  #panel { position: absolute; top: 10px; left: 10px; background: rgba(30,33,40,.9); padding: 10px 12px;
           border-radius: 6px; max-width: 260px; }
  #panel h1 { font-size: 14px; margin: 0 0 6px; }
  .legend-row { display: flex; align-items: center; gap: 6px; margin: 2px 0; }
  .swatch { width: 12px; height: 12px; border-radius: 50%; display: inline-block; }
  .vis-tooltip { white-space: pre-wrap; max-width: 420px; background: #222 !important; color: #eee !important; }
</style>
</head>
<body>
<div id="graph"></div>
<div id="panel"><h1 id="heading"></h1><div id="counts"></div><div id="legend"></div>
<div style="margin-top:6px;opacity:.7">Drag to pan, scroll to zoom, click a node to highlight its neighbours.</div></div>
<script type="application/json" id="graph-data">${scriptSafeJson(data)}</script>
<script>${visNetworkSource()}</script>
<script>
(function () {
  var data = JSON.parse(document.getElementById('graph-data').textContent);
  document.getElementById('heading').textContent = ${scriptSafeJson(page.title)};
  document.getElementById('counts').textContent = data.nodes.length + ' nodes, ' + data.edges.length + ' edges';
  document.body.setAttribute('data-node-count', String(data.nodes.length));
  document.body.setAttribute('data-edge-count', String(data.edges.length));
  var legend = document.getElementById('legend');
  Object.keys(data.colours).forEach(function (type) {
    var row = document.createElement('div'); row.className = 'legend-row';
    var sw = document.createElement('span'); sw.className = 'swatch'; sw.style.background = data.colours[type];
    row.appendChild(sw); row.appendChild(document.createTextNode(type)); legend.appendChild(row);
  });
  function tooltip(text) { var el = document.createElement('div'); el.textContent = text; return el; }
  var nodes = new vis.DataSet(data.nodes.map(function (n) {
    return { id: n.id, label: n.type, title: tooltip(n.tip), size: n.size, shape: 'dot',
             color: n.color, baseColor: n.color, font: { color: '#e6e6e6', size: 10 } };
  }));
  var edges = new vis.DataSet(data.edges.map(function (e, i) {
    return { id: i, from: e.from, to: e.to, color: { color: '#5a6070', opacity: 0.6 } };
  }));
  var network = new vis.Network(document.getElementById('graph'), { nodes: nodes, edges: edges }, {
    physics: { stabilization: { iterations: 300 }, barnesHut: { gravitationalConstant: -4000, springLength: 120 } },
    interaction: { hover: true, tooltipDelay: 120 },
    edges: { smooth: false }
  });
  network.once('stabilizationIterationsDone', function () {
    network.setOptions({ physics: false });
    document.body.setAttribute('data-stabilized', 'true');
  });
  network.on('click', function (params) {
    var focus = params.nodes[0];
    var keep = {};
    if (focus !== undefined) {
      keep[focus] = true;
      network.getConnectedNodes(focus).forEach(function (id) { keep[id] = true; });
    }
    nodes.update(nodes.get().map(function (n) {
      return { id: n.id, color: focus === undefined || keep[n.id] ? n.baseColor : 'rgba(120,120,120,0.25)' };
    }));
  });
  window.__noderagNetwork = network;
})();
</script>
</body>
</html>
`;
}
