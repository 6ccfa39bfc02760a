/**
 * `noderag vis` as a library call: load the committed base graph and the node texts, choose
 * the nodes, write `<folder>/index.html` atomically.
 */

import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { IndexNotBuiltError, NodeRagError } from '../errors.js';
import { verifyCommittedFiles } from '../index-io/checksums.js';
import { GRAPH_DELTA_FILE } from '../index-io/graph-delta.js';
import { IndexData } from '../index-io/index-data.js';
import { nodeText } from '../model/node-text.js';
import { removeDeadTempsBeside, writeFileAtomic } from '../project/atomic.js';
import { CACHE_FILES } from '../project/layout.js';
import { isCycleUnfinished, isSearchable, readState, requireSameDim } from '../project/state.js';
import { shellArg } from '../shell-arg.js';
import { chooseNodes } from './choose.js';
import { renderGraphHtml } from './html.js';

const VIS_FILE = 'index.html';
export const RECOMMENDED_MAX_NODES = 1000;

export interface VisResult {
  path: string;
  nodes: number;
  edges: number;
  linking: number;
  unreachableComponents: number;
  ms: number;
  /**
   * Set when a build cycle is unfinished (interrupted, or running): the tables drawn are the
   * ones its stages committed so far, neither the last finished generation nor the next.
   */
  unfinishedCycle: { generation: number; stage: string } | null;
}

/** The files the drawing is made from. */
const VIS_SOURCES = [
  CACHE_FILES.graphNodes,
  CACHE_FILES.graphEdges,
  CACHE_FILES.text,
  CACHE_FILES.units,
  CACHE_FILES.entities,
  CACHE_FILES.relationships,
  CACHE_FILES.attributes,
  CACHE_FILES.elements,
  CACHE_FILES.titles,
];

export async function writeVisualisation(folder: string, n: number, dim: number): Promise<VisResult> {
  const started = performance.now();
  const state = await readState(folder);
  if (!state || !isSearchable(state)) {
    throw new IndexNotBuiltError(
      `the index in ${folder} is not built yet; run \`noderag build -f ${shellArg(folder)}\` first`,
    );
  }
  requireSameDim(folder, state, dim);
  // The tables drawn are checked as a build's INIT checks them: a damaged or swapped table
  // would be drawn as a wrong graph without a word.
  // graph_delta.json exists only once a stage changed the graph after the Graph stage.
  await verifyCommittedFiles(folder, VIS_SOURCES, [GRAPH_DELTA_FILE]);
  const index = new IndexData(folder, dim);
  const [graph, texts, units, entities, relationships, attributes, elements, titles] = await Promise.all([
    index.graph(),
    index.texts(),
    index.units(),
    index.entities(),
    index.relationships(),
    index.attributes(),
    index.elements(),
    index.titles(),
  ]);
  const tables = { texts, units, entities, relationships, attributes, elements, titles };
  const chosen = await chooseNodes(graph, n);
  const html = renderGraphHtml({
    title: `noderag graph: ${chosen.nodes.length} nodes`,
    nodes: chosen.nodes.map((c) => ({
      id: c.id,
      type: c.type,
      score: c.score,
      text: nodeText(tables, c.id) ?? '',
    })),
    edges: chosen.edges,
  });
  const path = join(folder, VIS_FILE);
  // Pages of runs stopped before their rename (a Ctrl-C) are not left in the project.
  await removeDeadTempsBeside(path);
  // (The atomic rename would fail with a bare EISDIR.)
  if ((await lstat(path).catch(() => null))?.isDirectory()) {
    throw new NodeRagError(
      'vis_output_is_folder',
      `${path} is a folder; vis writes its page there: rename or remove it`,
    );
  }
  await writeFileAtomic(path, html);
  return {
    path,
    nodes: chosen.nodes.length,
    edges: chosen.edges.length,
    linking: chosen.nodes.filter((c) => c.linking).length,
    unreachableComponents: chosen.unreachableComponents,
    ms: performance.now() - started,
    unfinishedCycle: isCycleUnfinished(state)
      ? { generation: state.generation, stage: state.current_state }
      : null,
  };
}
