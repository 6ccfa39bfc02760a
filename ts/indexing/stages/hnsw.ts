/**
 * HNSW pipeline (docs/method.md §3.9): the vector index over text, semantic_unit, attribute and
 * high_level_element vectors, and the similarity edges exported from its layer 0.
 *
 * Labels are given in order (type order, then number) to vectors not yet indexed; a
 * regenerated attribute's old label is retired and its new vector gets a new label; the label
 * of a node no longer in the index (a removed chunk and what only it supported) is retired. The
 * index is rebuilt from the stored vectors (labels from 0) when more than 20 % of labels
 * would be retired, when HNSW.bin or id_map is unusable, or when space, m or ef changed.
 *
 * Insertion runs in batches of about a quarter of a second (off the main thread), so a
 * Ctrl-C stops the stage at the next batch and the progress line moves. The work is kept
 * across an interruption by checkpoints in cache/.hnsw-resume/: after `CHECKPOINT_MIN`
 * vectors, then each time the index has grown by half, the index is saved there and loaded
 * back. An interrupted stage resumes from its last checkpoint, so at most the vectors
 * inserted since are inserted again. The index bytes stay a function of the input alone
 * (crates/noderag_hnsw/src/build.rs): levels are a hash of the label, the native index links
 * fixed batches of 256 labels on all cores with the same result on any thread count, and
 * vectors that do not fill a batch wait, so the batches of this loop change nothing; a
 * checkpoint's save links the incomplete batch, and an uninterrupted run saves and loads at
 * the very same points as a resumed one. The checkpoint names what it was made
 * from (parameters, the committed id map, the labels to retire, the new vectors), so a
 * checkpoint of other input is never used.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { InternalError } from '../../errors.js';
import { type IdMapRow, TABLES } from '../../index-io/tables.js';
import { writeFileAtomic } from '../../project/atomic.js';
import { CACHE_DIR, CACHE_FILES, resolveInProject } from '../../project/layout.js';
import { writeSimilarityTable } from '../../store/index.js';
import { VectorIndex, type VectorIndexParams } from '../../vector/index.js';
import type { StageContext, StageResult } from './context.js';
import { dropHnswPrebuild, takeHnswPrebuild } from './hnsw-prebuild.js';
import {
  block,
  CHECKPOINT_MIN,
  contiguousRun,
  indexParams,
  nextCheckpoint,
  type VectorNode,
  vectorNodes,
} from './hnsw-vectors.js';

export { CHECKPOINT_MIN, nextCheckpoint } from './hnsw-vectors.js';

import { isFile } from '../../project/fs-probe.js';

const RETIRED_REBUILD_FRACTION = 0.2;

/** Where an interrupted insertion keeps its progress (removed when the stage ends). */
export const HNSW_RESUME_DIR = `${CACHE_DIR}/.hnsw-resume`;
const RESUME_INDEX = `${HNSW_RESUME_DIR}/HNSW.bin`;
const RESUME_META = `${HNSW_RESUME_DIR}/resume.json`;
const RESUME_VERSION = 1;

/** A batch is sized to take about this long, so a stop request waits at most about as much. */
const BATCH_TARGET_MS = 250;
const FIRST_BATCH = 32;
const MAX_BATCH = 8192;

function sameParams(a: VectorIndexParams, b: VectorIndexParams): boolean {
  return a.space === b.space && a.dim === b.dim && a.m === b.m && a.efConstruction === b.efConstruction;
}

/** "space l2→cosine, m 50→16, ef 200→200" when the index was built with other parameters, else null. */
function paramsChange(header: VectorIndexParams, params: VectorIndexParams): string | null {
  if (sameParams(header, params)) return null;
  return `space ${header.space}→${params.space}, m ${header.m}→${params.m}, ef ${header.efConstruction}→${params.efConstruction}`;
}

/**
 * The committed vector index's parameters against the config's, for a build with nothing to
 * index (the HNSW stage, which rebuilds the index when they differ, does not run then): what
 * changed, or null (also when there is no readable index).
 */
export async function vectorIndexParamsChange(
  root: string,
  params: VectorIndexParams,
): Promise<string | null> {
  const binPath = resolveInProject(root, CACHE_FILES.hnswBin);
  if (!(await isFile(binPath))) return null;
  try {
    return paramsChange(VectorIndex.readHeader(binPath), params);
  } catch {
    return null; // an unreadable index is rebuilt by the next HNSW stage, which says so
  }
}

/** The insertion job: what the index starts from and what is added to it. */
interface Job {
  /** Load the committed index and add to it, or build it anew. */
  mode: 'add' | 'rebuild';
  idMap: IdMapRow[];
  fresh: VectorNode[];
  toRetire: IdMapRow[];
}

/** Names a job's input, so a checkpoint is only ever resumed by the same job. */
function jobKey(params: VectorIndexParams, job: Job, baseCount: number): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ v: RESUME_VERSION, params, mode: job.mode, baseCount }));
  if (job.mode === 'add') {
    for (const r of job.idMap) h.update(`${r.label}\t${r.node}\t${r.type}\t${r.retired}\t${r.generation}\n`);
  }
  h.update(`retire ${job.toRetire.map((r) => r.label).join(',')}\n`);
  for (const n of job.fresh) {
    h.update(`${n.id}\n`);
    h.update(new Uint8Array(n.vector.buffer, n.vector.byteOffset, n.vector.byteLength));
  }
  return h.digest('hex');
}

interface ResumeMeta {
  version: number;
  key: string;
  /** New vectors already in the checkpoint. */
  done: number;
}

async function readResumeMeta(root: string): Promise<ResumeMeta | null> {
  try {
    const m = JSON.parse(await readFile(resolveInProject(root, RESUME_META), 'utf8')) as Partial<ResumeMeta>;
    if (m.version === RESUME_VERSION && typeof m.key === 'string' && Number.isInteger(m.done)) {
      return m as ResumeMeta;
    }
  } catch {
    // No checkpoint, or an unreadable one: start over.
  }
  return null;
}

/** The checkpoint of this job, if there is a usable one. */
async function resume(
  ctx: StageContext,
  key: string,
  baseCount: number,
  freshCount: number,
): Promise<{ index: VectorIndex; done: number } | null> {
  const meta = await readResumeMeta(ctx.root);
  if (!meta || meta.key !== key || meta.done <= 0 || meta.done >= freshCount) return null;
  try {
    const index = await VectorIndex.load(resolveInProject(ctx.root, RESUME_INDEX), {
      expectedDim: ctx.config.config.dim,
      expectedCount: baseCount + meta.done,
      forUpdate: true,
    });
    return { index, done: meta.done };
  } catch (error) {
    ctx.log.warn(`the HNSW checkpoint is unusable, starting over (${(error as Error).message})`);
    return null;
  }
}

async function saveCheckpoint(
  ctx: StageContext,
  index: VectorIndex,
  key: string,
  done: number,
): Promise<void> {
  await mkdir(resolveInProject(ctx.root, HNSW_RESUME_DIR), { recursive: true });
  // The index first: meta describing a checkpoint that is not fully written is never seen.
  await rm(resolveInProject(ctx.root, RESUME_META), { force: true });
  await index.save(resolveInProject(ctx.root, RESUME_INDEX));
  const meta: ResumeMeta = { version: RESUME_VERSION, key, done };
  await writeFileAtomic(resolveInProject(ctx.root, RESUME_META), `${JSON.stringify(meta)}\n`);
}

/** Tuning of the insertion loop; tests bound the batch so their timing does not depend on the machine. */
export interface HnswStageOptions {
  /** Most vectors per batch (default 8192); batches are otherwise sized to take ~250 ms. */
  maxBatch?: number;
}

/** Wall time of the stage's steps, for the info.log line that says where a stage's time went. */
function stepTimer(): { lap: (step: string) => void; line: () => string } {
  const laps: string[] = [];
  let last = performance.now();
  return {
    lap(step) {
      const now = performance.now();
      laps.push(`${step} ${((now - last) / 1000).toFixed(2)} s`);
      last = now;
    },
    line: () => laps.join(', '),
  };
}

export async function hnswStage(ctx: StageContext, options: HnswStageOptions = {}): Promise<StageResult> {
  const c = ctx.config.config;
  const params = indexParams(ctx.config);
  const binPath = resolveInProject(ctx.root, CACHE_FILES.hnswBin);
  const steps = stepTimer();
  const nodes = await vectorNodes(ctx.index);
  steps.lap('read vectors');
  ctx.progress.begin(nodes.length, 'vectors');

  // The committed index, if it is usable with the current parameters.
  let committedIdMap: IdMapRow[] = [];
  let rebuildReason: string | null = null;
  try {
    committedIdMap = [...(await ctx.index.idMap())];
  } catch (error) {
    rebuildReason = `id_map.parquet is unreadable (${(error as Error).message})`;
  }
  if (rebuildReason === null && committedIdMap.length > 0) {
    if (!(await isFile(binPath))) rebuildReason = 'HNSW.bin is missing';
    else {
      try {
        const changed = paramsChange(VectorIndex.readHeader(binPath), params);
        if (changed) rebuildReason = `parameters changed (${changed})`;
      } catch (error) {
        rebuildReason = `HNSW.bin is unusable (${(error as Error).message})`;
      }
    }
  }

  const rebuildJob = (): Job => ({
    mode: 'rebuild',
    idMap: nodes.map((n, label) => ({ label, node: n.id, type: n.type, retired: false, generation: ctx.g })),
    fresh: nodes,
    toRetire: [],
  });
  let job: Job = rebuildJob();
  if (rebuildReason === null && committedIdMap.length > 0) {
    // Which vectors are new, and which labels go stale (regenerated attributes).
    const idMap = committedIdMap.map((r) => ({ ...r }));
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
    // Nodes removed from the index (deleted or changed documents, docs/method.md §4.5).
    const present = new Set(nodes.map((n) => n.id));
    for (const row of active.values()) if (!present.has(row.node)) toRetire.push(row);
    toRetire.sort((p, q) => p.label - q.label);
    const retiredTotal = idMap.filter((r) => r.retired).length + toRetire.length;
    if (retiredTotal / (idMap.length + fresh.length) > RETIRED_REBUILD_FRACTION) {
      rebuildReason = `${retiredTotal} of ${idMap.length + fresh.length} labels would be retired (more than 20 %)`;
    } else {
      job = { mode: 'add', idMap, fresh, toRetire };
    }
  }

  // Start from the checkpoint of an interrupted run of this same job, or from the base.
  let baseCount = job.mode === 'add' ? job.idMap.length : 0;
  let key = jobKey(params, job, baseCount);
  let resumed = await resume(ctx, key, baseCount, job.fresh.length);
  let index: VectorIndex | null = resumed?.index ?? null;
  if (!index && job.mode === 'add') {
    try {
      index = await VectorIndex.load(binPath, {
        expectedDim: c.dim,
        expectedCount: baseCount,
        forUpdate: true,
      });
    } catch (error) {
      rebuildReason = `HNSW.bin is unusable (${(error as Error).message})`;
      job = rebuildJob();
      baseCount = 0;
      key = jobKey(params, job, baseCount);
      resumed = await resume(ctx, key, baseCount, job.fresh.length);
      index = resumed?.index ?? null;
    }
  }
  if (job.mode === 'rebuild' && rebuildReason) {
    ctx.log.warn(`rebuilding the vector index: ${rebuildReason}`);
    ctx.progress.note(`rebuilding the vector index: ${rebuildReason}`);
  }
  // The vectors the build began to insert while the Summary stage ran (hnsw-prebuild.ts), when
  // this job starts with exactly them; the graph is the same as without.
  const early = !index && job.mode === 'rebuild' ? await takeHnswPrebuild(ctx.root, params, job.fresh) : null;
  if (early) index = early.index;
  else await dropHnswPrebuild(ctx.root);
  let done = resumed?.done ?? early?.done ?? 0;
  const startedAt = done;
  if (early) {
    ctx.log.info(
      `HNSW pipeline: ${done} of ${job.fresh.length} vectors were inserted while earlier stages ran`,
    );
  }
  if (resumed) {
    ctx.log.info(`HNSW pipeline: resuming after ${done} of ${job.fresh.length} vectors (checkpoint)`);
    ctx.progress.note(
      `resuming: ${done} of ${job.fresh.length} new vectors were inserted before the interruption`,
    );
  } else {
    await rm(resolveInProject(ctx.root, HNSW_RESUME_DIR), { recursive: true, force: true });
  }
  if (!index) index = VectorIndex.create(params);
  steps.lap(job.mode === 'add' ? 'load index' : early ? `take ${early.done} inserted early` : 'new index');

  const { fresh } = job;
  const before = nodes.length - fresh.length;
  let checkpointAt = CHECKPOINT_MIN;
  while (checkpointAt <= done) checkpointAt = nextCheckpoint(baseCount, checkpointAt);
  const maxBatch = Math.max(1, options.maxBatch ?? MAX_BATCH);
  let batch = Math.min(FIRST_BATCH, maxBatch);
  try {
    ctx.progress.update(before + done);
    while (done < fresh.length) {
      // A stop request ends the stage here; the last checkpoint keeps what was done.
      ctx.stop.check();
      const most = Math.min(batch, fresh.length - done, checkpointAt - done);
      // A batch ends where the vectors stop being contiguous (a table's end), so each batch
      // is a view; batch bounds do not change the index (the native batches are fixed).
      const run = contiguousRun(fresh, done, most, c.dim);
      const n = run >= Math.min(most, FIRST_BATCH) ? run : most;
      const started = performance.now();
      const first = await index.addBatch(block(fresh, done, n, c.dim), { deferView: true });
      if (first !== baseCount + done) {
        throw new InternalError(
          'internal_error',
          `vector index returned first label ${first}, expected ${baseCount + done}`,
        );
      }
      done += n;
      const ms = Math.max(1, performance.now() - started);
      batch = Math.max(1, Math.min(maxBatch, Math.round((n * BATCH_TARGET_MS) / ms)));
      ctx.progress.update(before + done);
      if (done === checkpointAt && done < fresh.length) {
        await saveCheckpoint(ctx, index, key, done);
        index.close();
        index = await VectorIndex.load(resolveInProject(ctx.root, RESUME_INDEX), {
          expectedDim: c.dim,
          expectedCount: baseCount + done,
          forUpdate: true,
        });
        checkpointAt = nextCheckpoint(baseCount, checkpointAt);
      }
    }
    ctx.stop.check();
    steps.lap(`insert ${fresh.length - startedAt}`);
  } catch (error) {
    index.close();
    throw error;
  }

  const idMap = job.idMap;
  if (job.mode === 'add') {
    for (const row of job.toRetire) row.retired = true;
    if (job.toRetire.length > 0) index.retire(job.toRetire.map((r) => r.label));
    fresh.forEach((n, i) => {
      idMap.push({ label: baseCount + i, node: n.id, type: n.type, retired: false, generation: ctx.g });
    });
  }
  const added = fresh.length;

  try {
    // The save links the vectors of the incomplete last batch; the layer-0 lists are then read
    // from the graph itself: this stage never searches, so no search view is made.
    await index.save(ctx.out.pathFor(CACHE_FILES.hnswBin));
    steps.lap('save');
    // Similarity edges: layer-0 links between active labels, as undirected node pairs,
    // made and written natively (crates/noderag_store/src/similarity.rs).
    const layer0 = index.layer0Edges();
    const edgeCount = await writeSimilarityTable(
      ctx.out.pathFor(CACHE_FILES.hnswGraph),
      idMap.map((r) => r.node),
      Uint8Array.from(idMap, (r) => (r.retired ? 1 : 0)),
      layer0.src,
      layer0.dst,
    );
    steps.lap('similarity edges');
    await ctx.out.table(TABLES.idMap, idMap);
    steps.lap('id map');
    ctx.log.info(`HNSW pipeline steps: ${steps.line()}`);
    ctx.index.replace('idMap', idMap);
    // The outputs are staged: the checkpoint has served its purpose.
    await rm(resolveInProject(ctx.root, HNSW_RESUME_DIR), { recursive: true, force: true });
    const retired = idMap.filter((r) => r.retired).length;
    return {
      counts: { items: added },
      summary: `${added} vectors added, ${idMap.length - retired} active labels, ${retired} retired, ${edgeCount} similarity edges${job.mode === 'rebuild' && rebuildReason ? ' (rebuilt)' : ''}${resumed ? ` (resumed after ${resumed.done})` : ''}`,
    };
  } finally {
    index.close();
  }
}
