/**
 * HNSW pipeline (docs/method.md §3.9): the vector index over text, semantic_unit, attribute and
 * high_level_element vectors, and the similarity edges exported from its layer 0.
 *
 * Labels are given in order (type order, then number) to vectors not yet indexed; a
 * regenerated attribute's old label is retired and its new vector gets a new label. The
 * index is rebuilt from the stored vectors (labels from 0) when more than 20 % of labels
 * would be retired, when HNSW.bin or id_map is unusable, or when space, m or ef changed.
 */
import { stat } from 'node:fs/promises';
import { InternalError } from '../../errors.js';
import { type IdMapRow, type SimilarityEdge, TABLES } from '../../index-io/tables.js';
import type { NodeType } from '../../model/types.js';
import { CACHE_FILES, resolveInProject } from '../../project/layout.js';
import { VectorIndex, type VectorIndexParams } from '../../vector/index.js';
import type { StageContext, StageResult } from './context.js';

const RETIRED_REBUILD_FRACTION = 0.2;

interface VectorNode {
  id: string;
  type: NodeType;
  vector: Float32Array;
  /** Generation its current vector was made in (attributes: updated_generation). */
  madeIn: number;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function sameParams(a: VectorIndexParams, b: VectorIndexParams): boolean {
  return a.space === b.space && a.dim === b.dim && a.m === b.m && a.efConstruction === b.efConstruction;
}

function flatten(nodes: readonly VectorNode[], dim: number): Float32Array {
  const flat = new Float32Array(nodes.length * dim);
  nodes.forEach((n, i) => {
    flat.set(n.vector, i * dim);
  });
  return flat;
}

/** Every vector node in label order: text, semantic_unit, attribute, high_level_element, then number. */
async function vectorNodes(ctx: StageContext): Promise<VectorNode[]> {
  const out: VectorNode[] = [];
  const push = (id: string, type: NodeType, v: Float32Array | null, madeIn: number) => {
    if (!v)
      throw new InternalError(
        'internal_error',
        `${type} ${id} has no vector; the Embedding pipeline must run first`,
      );
    out.push({ id, type, vector: v, madeIn });
  };
  const byNumber = <T extends { humanReadableId: number }>(m: Map<string, T>) =>
    [...m.values()].sort((a, b) => a.humanReadableId - b.humanReadableId);
  for (const t of [...(await ctx.index.texts()).values()].sort((a, b) => a.textId - b.textId)) {
    push(t.hashId, 'text', t.embedding, t.generation);
  }
  for (const u of byNumber(await ctx.index.units()))
    push(u.hashId, 'semantic_unit', u.embedding, u.generation);
  for (const a of byNumber(await ctx.index.attributes()))
    push(a.hashId, 'attribute', a.embedding, a.updatedGeneration);
  for (const e of byNumber(await ctx.index.elements()))
    push(e.hashId, 'high_level_element', e.embedding, e.generation);
  return out;
}

export async function hnswStage(ctx: StageContext): Promise<StageResult> {
  const c = ctx.config.config;
  const params: VectorIndexParams = { space: c.space, dim: c.dim, m: c.m, efConstruction: c.ef };
  const binPath = resolveInProject(ctx.root, CACHE_FILES.hnswBin);
  const nodes = await vectorNodes(ctx);
  ctx.progress.begin(nodes.length, 'vectors');

  // The committed index, if it is usable with the current parameters.
  let idMap: IdMapRow[] = [];
  let index: VectorIndex | null = null;
  let rebuildReason: string | null = null;
  try {
    idMap = [...(await ctx.index.idMap())];
  } catch (error) {
    rebuildReason = `id_map.parquet is unreadable (${(error as Error).message})`;
  }
  if (rebuildReason === null && idMap.length > 0) {
    if (!(await isFile(binPath))) rebuildReason = 'HNSW.bin is missing';
    else {
      try {
        const header = VectorIndex.readHeader(binPath);
        if (!sameParams(header, params)) {
          rebuildReason = `parameters changed (space ${header.space}→${params.space}, m ${header.m}→${params.m}, ef ${header.efConstruction}→${params.efConstruction})`;
        } else {
          index = await VectorIndex.load(binPath, { expectedDim: c.dim, expectedCount: idMap.length });
        }
      } catch (error) {
        rebuildReason = `HNSW.bin is unusable (${(error as Error).message})`;
      }
    }
  }

  // Which vectors are new, and which labels go stale (regenerated attributes).
  const active = new Map<string, IdMapRow>();
  for (const row of idMap) if (!row.retired) active.set(row.node, row);
  const toRetire: IdMapRow[] = [];
  const fresh: VectorNode[] = [];
  for (const n of nodes) {
    const row = active.get(n.id);
    if (!row) fresh.push(n);
    else if (row.generation < n.madeIn) {
      toRetire.push(row);
      fresh.push(n);
    }
  }
  const retiredTotal = idMap.filter((r) => r.retired).length + toRetire.length;
  if (
    rebuildReason === null &&
    idMap.length > 0 &&
    retiredTotal / (idMap.length + fresh.length) > RETIRED_REBUILD_FRACTION
  ) {
    rebuildReason = `${retiredTotal} of ${idMap.length + fresh.length} labels would be retired (more than 20 %)`;
  }

  let added: number;
  if (rebuildReason !== null || index === null) {
    if (rebuildReason) ctx.log.warn(`rebuilding the vector index: ${rebuildReason}`);
    if (rebuildReason) ctx.progress.note(`rebuilding the vector index: ${rebuildReason}`);
    index?.close();
    idMap = nodes.map((n, label) => ({ label, node: n.id, type: n.type, retired: false, generation: ctx.g }));
    index = await VectorIndex.build(params, flatten(nodes, c.dim));
    added = nodes.length;
  } else {
    for (const row of toRetire) row.retired = true;
    if (toRetire.length > 0) index.retire(toRetire.map((r) => r.label));
    const first = idMap.length;
    if (fresh.length > 0) {
      const label = await index.addBatch(flatten(fresh, c.dim));
      if (label !== first) {
        throw new InternalError(
          'internal_error',
          `vector index returned first label ${label}, expected ${first}`,
        );
      }
    }
    fresh.forEach((n, i) => {
      idMap.push({ label: first + i, node: n.id, type: n.type, retired: false, generation: ctx.g });
    });
    added = fresh.length;
  }
  ctx.progress.update(nodes.length);

  try {
    // Similarity edges: layer-0 links between active labels, as undirected node pairs.
    const layer0 = index.layer0Edges();
    const seen = new Set<string>();
    const edges: SimilarityEdge[] = [];
    for (let i = 0; i < layer0.src.length; i++) {
      const a = idMap[layer0.src[i]!];
      const b = idMap[layer0.dst[i]!];
      if (!a || !b || a.retired || b.retired || a.node === b.node) continue;
      const [source, target] = a.node < b.node ? [a.node, b.node] : [b.node, a.node];
      const key = `${source}|${target}`;
      if (seen.has(key)) continue;
      seen.add(key);
      edges.push({ source, target });
    }
    await index.save(ctx.out.pathFor(CACHE_FILES.hnswBin));
    await ctx.out.table(TABLES.idMap, idMap);
    await ctx.out.table(TABLES.hnswGraph, edges);
    ctx.index.replace('idMap', idMap);
    const retired = idMap.filter((r) => r.retired).length;
    return {
      counts: { items: added },
      summary: `${added} vectors added, ${idMap.length - retired} active labels, ${retired} retired, ${edges.length} similarity edges${rebuildReason ? ' (rebuilt)' : ''}`,
    };
  } finally {
    index.close();
  }
}
