/**
 * The committed base graph is graph_nodes.parquet and graph_edges.parquet with
 * cache/graph_delta.json applied (ts/index-io/graph-delta.ts): a stage in the middle of a cycle
 * stages the delta, the cycle's last graph stage the tables whole; the build (IndexData) and
 * search's table path (readSearchTables) both read the tables with the delta.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GRAPH_DELTA_FILE } from '../../ts/index-io/graph-delta.js';
import { IndexData } from '../../ts/index-io/index-data.js';
import { readSearchTables, SEARCH_TABLE_NAMES } from '../../ts/index-io/search-tables.js';
import { TABLES } from '../../ts/index-io/tables.js';
import { recoverStaging, StageCommit } from '../../ts/indexing/commit.js';
import { stageGraphTables } from '../../ts/indexing/stages/graph.js';
import { StageOutputs } from '../../ts/indexing/stages/outputs.js';
import type { BaseGraph } from '../../ts/model/graph-store.js';
import { resolveInProject } from '../../ts/project/layout.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-graph-delta-'));
  await mkdir(join(root, 'cache'));
  await mkdir(join(root, 'info'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const id = (i: number) => `n${String(i).padStart(3, '0')}`;

/** Stages the graph of `index` in one commit; returns the destinations committed. */
async function commitGraph(index: IndexData, whole = false): Promise<readonly string[]> {
  await recoverStaging(root);
  const commit = await StageCommit.begin(root);
  const out = new StageOutputs(commit);
  await stageGraphTables(index, out, { whole });
  const staged = [...out.staged];
  await commit.commit({ deferGraphSnapshot: true });
  return staged;
}

const view = (g: BaseGraph) =>
  JSON.stringify([
    [...g.nodes].sort(),
    [...g.edges.values()].map((e) => [e.source, e.target, e.weight]).sort(),
  ]);

describe('graph tables and cache/graph_delta.json', () => {
  it('a small change commits a delta; build and search read tables + delta; whole tables empty it', async () => {
    const first = new IndexData(root, 4);
    const g = await first.graph();
    for (let i = 0; i < 40; i++) g.bumpNode(id(i), i % 2 ? 'entity' : 'semantic_unit', 1);
    for (let i = 0; i < 39; i++) g.bumpEdge(id(i), id(i + 1), 1);
    // A first graph: nothing to take a delta of, so the tables are written.
    expect(await commitGraph(first)).toEqual(
      expect.arrayContaining([TABLES.graphNodes.file, TABLES.graphEdges.file]),
    );

    // A few rows change (removed, re-weighted, added): only the delta is committed.
    g.nodes.delete(id(5));
    g.edges.delete(`${id(4)}|${id(5)}`);
    g.edges.delete(`${id(5)}|${id(6)}`);
    g.bumpNode(id(7), 'entity', 2, 3);
    g.bumpNode('x-new', 'attribute', 2);
    g.bumpEdge('x-new', id(7), 2);
    g.bumpEdge(id(8), id(9), 2, 4);
    const staged = await commitGraph(first);
    expect(staged).toContain(GRAPH_DELTA_FILE);
    expect(staged).not.toContain(TABLES.graphNodes.file);
    expect(staged).not.toContain(TABLES.graphEdges.file);
    expect((await TABLES.graphNodes.load(root)).length).toBe(40);

    // A later run (a resumed build) and search read the tables with the delta.
    for (const name of SEARCH_TABLE_NAMES) {
      if (name !== 'graphNodes' && name !== 'graphEdges') await TABLES[name].save(root, [], 4);
    }
    expect(view(await new IndexData(root, 4).graph())).toBe(view(g));
    const tables = await readSearchTables((relative) => resolveInProject(root, relative));
    const ids = tables.graphNodes.utf8('id');
    expect(ids).toEqual([...g.nodes.keys()].sort());
    expect(ids).not.toContain(id(5));
    const types = tables.graphNodes.utf8Dictionary('type');
    expect(types.values[types.keys[ids.indexOf('x-new')]!]).toBe('attribute');
    const sources = tables.graphEdges.utf8('source');
    const targets = tables.graphEdges.utf8('target');
    const weights = tables.graphEdges.int('weight');
    const edges = sources.map((s, i) => `${s}|${targets[i]} ${weights[i]}`);
    expect(edges).toContain(`${id(8)}|${id(9)} 5`);
    expect(edges).toContain(`${id(7)}|x-new 1`);
    expect(edges.some((e) => e.includes(id(5)))).toBe(false);
    expect(edges.length).toBe(g.edges.size);

    // The cycle's last graph stage: both tables whole, the delta emptied.
    const resumed = new IndexData(root, 4);
    const again = await resumed.graph();
    again.touch(id(1), 3);
    const last = await commitGraph(resumed, true);
    expect(last).toEqual(
      expect.arrayContaining([TABLES.graphNodes.file, TABLES.graphEdges.file, GRAPH_DELTA_FILE]),
    );
    const emptied = JSON.parse(await readFile(resolveInProject(root, GRAPH_DELTA_FILE), 'utf8'));
    expect([emptied.nodes, emptied.removed_nodes, emptied.edges, emptied.removed_edges]).toEqual([
      [],
      [],
      [],
      [],
    ]);
    expect((await TABLES.graphNodes.load(root)).map((n) => n.id)).toEqual([...again.nodes.keys()].sort());
    expect(view(await new IndexData(root, 4).graph())).toBe(view(again));

    // A later change in the same run (a follow-up cycle) is a delta against those tables.
    again.bumpNode('y-new', 'text', 4);
    const follow = await commitGraph(resumed);
    expect(follow).toEqual([GRAPH_DELTA_FILE]);
    const delta = JSON.parse(await readFile(resolveInProject(root, GRAPH_DELTA_FILE), 'utf8'));
    expect(delta.nodes).toEqual([['y-new', 'text', 1, 4, 4]]);
    expect(view(await new IndexData(root, 4).graph())).toBe(view(again));
  });

  it('writes the tables once the delta would hold half their rows, and a first graph even empty', async () => {
    const index = new IndexData(root, 4);
    expect(await commitGraph(index)).toEqual([TABLES.graphNodes.file, TABLES.graphEdges.file]);
    expect(await TABLES.graphNodes.load(root)).toEqual([]);
    const g = await index.graph();
    for (let i = 0; i < 10; i++) g.bumpNode(id(i), 'entity', 1);
    await commitGraph(index);
    for (let i = 10; i < 16; i++) g.bumpNode(id(i), 'entity', 2);
    const staged = await commitGraph(index);
    expect(staged).toEqual(expect.arrayContaining([TABLES.graphNodes.file, TABLES.graphEdges.file]));
    // No delta was ever committed: none is written.
    expect(staged).not.toContain(GRAPH_DELTA_FILE);
    expect((await TABLES.graphNodes.load(root)).length).toBe(16);
  });
});
