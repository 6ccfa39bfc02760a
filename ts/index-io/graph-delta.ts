/**
 * cache/graph_delta.json: what changed in the base graph since graph_nodes.parquet and
 * graph_edges.parquet were last written. The committed graph is those two tables with this
 * delta applied (docs/method.md §4.4). Stages in the middle of a build cycle commit the delta
 * instead of both tables whole: a sync changes a few thousand of the graph's rows, and writing
 * the two tables costs about 0.2 s each time (sorting, compressing 64-character ids, fsync).
 * The cycle's last stage that changes the graph (Insert text) writes the tables whole and an
 * empty delta, so a finished index has the tables alone; a delta that grows past half the
 * tables' rows is folded into them early.
 *
 * Format: one JSON object, rows sorted by id (so the same graph gives the same bytes):
 * `{"version":1,"nodes":[[id,type,weight,generation,updated_generation],…],
 *   "removed_nodes":[id,…],"edges":[[source,target,weight,generation],…],
 *   "removed_edges":[[source,target],…]}`; `nodes` and `edges` replace or add whole rows.
 */
import { IndexFileError } from '../errors.js';
import { type BaseGraph, edgeKey } from '../model/graph-store.js';
import { type GraphEdge, type GraphNode, NODE_TYPES, type NodeType } from '../model/types.js';
import { projectOf } from '../project/layout.js';
import { readTextIfExists } from '../project/read-optional.js';
import { rebuildHint } from '../project/state.js';

export const GRAPH_DELTA_FILE = 'cache/graph_delta.json';
const VERSION = 1;

export interface GraphDelta {
  nodes: [string, GraphNode][];
  removedNodes: string[];
  edges: GraphEdge[];
  removedEdges: [string, string][];
}

/** The node and edge rows of a graph (a BaseGraph's maps, or the rows as committed). */
export interface GraphRows {
  nodes: ReadonlyMap<string, GraphNode>;
  edges: ReadonlyMap<string, GraphEdge>;
}

export function emptyGraphDelta(): GraphDelta {
  return { nodes: [], removedNodes: [], edges: [], removedEdges: [] };
}

export function graphDeltaSize(d: GraphDelta): number {
  return d.nodes.length + d.removedNodes.length + d.edges.length + d.removedEdges.length;
}

/** A copy of the rows, unaffected by later edits of the graph they were taken from. */
export function copyGraphRows(g: GraphRows): GraphRows {
  return {
    nodes: new Map(Array.from(g.nodes, ([id, n]) => [id, { ...n }])),
    edges: new Map(Array.from(g.edges, ([key, e]) => [key, { ...e }])),
  };
}

const sameNode = (a: GraphNode, b: GraphNode) =>
  a.type === b.type &&
  a.weight === b.weight &&
  a.generation === b.generation &&
  a.updatedGeneration === b.updatedGeneration;

const sameEdge = (a: GraphEdge, b: GraphEdge) =>
  a.source === b.source && a.target === b.target && a.weight === b.weight && a.generation === b.generation;

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What turns `base` into `graph`. */
export function diffGraph(base: GraphRows, graph: GraphRows): GraphDelta {
  const d = emptyGraphDelta();
  for (const [id, n] of graph.nodes) {
    const was = base.nodes.get(id);
    if (!was || !sameNode(was, n)) d.nodes.push([id, { ...n }]);
  }
  for (const id of base.nodes.keys()) if (!graph.nodes.has(id)) d.removedNodes.push(id);
  for (const [key, e] of graph.edges) {
    const was = base.edges.get(key);
    if (!was || !sameEdge(was, e)) d.edges.push({ ...e });
  }
  for (const [key, e] of base.edges) if (!graph.edges.has(key)) d.removedEdges.push([e.source, e.target]);
  return sortDelta(d);
}

/**
 * `diffGraph(base, graph)` where base is the graph when it last started tracking its changes
 * (BaseGraph.trackChanges): only the rows changed since are compared, from the values they
 * had then, so the cost follows the change rather than the graph (a sync changes a few
 * thousand of HotpotQA-100's 70,000 rows; the whole comparison took 45–75 ms per stage).
 */
export function trackedGraphDelta(graph: BaseGraph): GraphDelta {
  const d = emptyGraphDelta();
  for (const [id, was] of graph.nodes.changedRows()) {
    const n = graph.nodes.get(id);
    if (!n) {
      if (was) d.removedNodes.push(id);
    } else if (!was || !sameNode(was, n)) d.nodes.push([id, { ...n }]);
  }
  for (const [key, was] of graph.edges.changedRows()) {
    const e = graph.edges.get(key);
    if (!e) {
      if (was) d.removedEdges.push([was.source, was.target]);
    } else if (!was || !sameEdge(was, e)) d.edges.push({ ...e });
  }
  return sortDelta(d);
}

function sortDelta(d: GraphDelta): GraphDelta {
  d.nodes.sort((a, b) => byString(a[0], b[0]));
  d.removedNodes.sort(byString);
  d.edges.sort((a, b) => byString(a.source, b.source) || byString(a.target, b.target));
  d.removedEdges.sort((a, b) => byString(a[0], b[0]) || byString(a[1], b[1]));
  return d;
}

/** Applies `d` to the maps of a graph, in place. */
export function applyGraphDelta(
  graph: { nodes: Map<string, GraphNode>; edges: Map<string, GraphEdge> },
  d: GraphDelta,
): void {
  for (const id of d.removedNodes) graph.nodes.delete(id);
  for (const [id, n] of d.nodes) graph.nodes.set(id, { ...n });
  for (const [a, b] of d.removedEdges) graph.edges.delete(edgeKey(a, b));
  for (const e of d.edges) graph.edges.set(edgeKey(e.source, e.target), { ...e });
}

export function serializeGraphDelta(d: GraphDelta): string {
  return `${JSON.stringify({
    version: VERSION,
    nodes: d.nodes.map(([id, n]) => [id, n.type, n.weight, n.generation, n.updatedGeneration]),
    removed_nodes: d.removedNodes,
    edges: d.edges.map((e) => [e.source, e.target, e.weight, e.generation]),
    removed_edges: d.removedEdges,
  })}\n`;
}

const NODE_TYPE_SET: ReadonlySet<string> = new Set(NODE_TYPES);
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isId = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** `root`: the project folder, named in the way out of damage. */
export function parseGraphDelta(text: string, label: string, root?: string): GraphDelta {
  const bad = (what: string): never => {
    throw new IndexFileError(
      'index_damaged',
      `${label}: ${what}; the index is damaged: ${rebuildHint(root)}`,
    );
  };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return bad(`not valid JSON (${(error as Error).message})`);
  }
  const o = raw as Record<string, unknown> | null;
  if (o === null || typeof o !== 'object' || o.version !== VERSION)
    bad(`expected an object with version ${VERSION}`);
  const list = (key: string): unknown[] =>
    Array.isArray(o![key]) ? (o![key] as unknown[]) : bad(`${key} must be a list`);
  const d = emptyGraphDelta();
  for (const row of list('nodes')) {
    const [id, type, weight, generation, updated] = Array.isArray(row) ? row : [];
    if (
      !isId(id) ||
      !NODE_TYPE_SET.has(type as string) ||
      !isInt(weight) ||
      !isInt(generation) ||
      !isInt(updated)
    ) {
      bad(`nodes: expected [id, type, weight, generation, updated_generation], got ${JSON.stringify(row)}`);
    }
    d.nodes.push([
      id as string,
      { type: type as NodeType, weight, generation, updatedGeneration: updated } as GraphNode,
    ]);
  }
  for (const id of list('removed_nodes'))
    d.removedNodes.push(isId(id) ? id : bad('removed_nodes: expected ids'));
  for (const row of list('edges')) {
    const [source, target, weight, generation] = Array.isArray(row) ? row : [];
    if (!isId(source) || !isId(target) || !isInt(weight) || !isInt(generation)) {
      bad(`edges: expected [source, target, weight, generation], got ${JSON.stringify(row)}`);
    }
    d.edges.push({ source, target, weight, generation } as GraphEdge);
  }
  for (const row of list('removed_edges')) {
    const [a, b] = Array.isArray(row) ? row : [];
    d.removedEdges.push(isId(a) && isId(b) ? [a, b] : bad('removed_edges: expected [source, target] pairs'));
  }
  return d;
}

/** The committed delta at `path`, or null when there is none (a first build, older indexes). */
export async function readGraphDelta(path: string, label: string): Promise<GraphDelta | null> {
  const text = await readTextIfExists(path);
  return text === null ? null : parseGraphDelta(text, label, projectOf(path, label));
}
