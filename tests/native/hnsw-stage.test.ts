/**
 * The HNSW pipeline stage (ts/indexing/stages/hnsw.ts) on a synthetic index: insertion in
 * batches that a stop request ends within a second, progress while it runs, checkpoints
 * that let an interrupted stage resume without inserting its work again, and index bytes
 * that stay the same whether the stage was interrupted or not.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { recoverStaging, StageCommit } from '../../ts/indexing/commit.js';
import type { StageContext } from '../../ts/indexing/stages/context.js';
import { CHECKPOINT_MIN, HNSW_RESUME_DIR, hnswStage } from '../../ts/indexing/stages/hnsw.js';
import {
  feedHnswPrebuild,
  hnswPrebuildDone,
  startHnswPrebuild,
} from '../../ts/indexing/stages/hnsw-prebuild.js';
import { InterruptedError, StopSignal } from '../../ts/indexing/stages/interrupt.js';
import { StageOutputs } from '../../ts/indexing/stages/outputs.js';
import { Progress } from '../../ts/indexing/stages/progress.js';

const DIM = 16;
const COUNT = 10_000;
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Seeded vectors (mulberry32), so every run sees the same data. */
function vectors(n: number, dim: number, seed: number): Float32Array[] {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: n }, () => Float32Array.from({ length: dim }, () => rand() * 2 - 1));
}

const DATA = vectors(COUNT, DIM, 7);
/**
 * Batches of at most 256 vectors: the stage sizes batches by time, and on a fast machine one
 * batch would otherwise run from the first checkpoint to the next, leaving nothing for the
 * progress and stop checks below to see. Bounding the batch keeps them machine-independent.
 */
const STAGE_OPTIONS = { maxBatch: 256 };
const TEXTS = new Map(
  DATA.map((v, i) => {
    const hashId = `text-${String(i).padStart(6, '0')}`;
    return [hashId, { hashId, textId: i, embedding: v, generation: 1 }];
  }),
);

/** The info lines the stage logs from now on. */
function capturedInfo(ctx: StageContext): string[] {
  const infos: string[] = [];
  (ctx as { log: unknown }).log = { info: (m: string) => infos.push(m), warn: () => undefined };
  return infos;
}

/** Waits (a minute at most) until the early insertion of `root` has inserted `count` vectors. */
async function prebuildReached(root: string, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (hnswPrebuildDone(root) < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface Run {
  ctx: StageContext;
  commit: StageCommit;
  stop: StopSignal;
  /** Every "done/total" count the progress line showed. */
  shown: number[];
  notes: string[];
}

async function run(root: string, onShown?: (done: number, stop: StopSignal) => void): Promise<Run> {
  await recoverStaging(root);
  const commit = await StageCommit.begin(root);
  const stop = new StopSignal();
  const shown: number[] = [];
  const notes: string[] = [];
  const out = {
    isTTY: true,
    write(text: string) {
      const m = /([\d,]+)\/([\d,]+) vectors/.exec(text);
      if (m) {
        const done = Number(m[1]!.replaceAll(',', ''));
        shown.push(done);
        onShown?.(done, stop);
      } else if (text.trim()) notes.push(text.trim());
      return true;
    },
  };
  const replaced: unknown[] = [];
  const ctx = {
    root,
    config: { config: { space: 'l2', dim: DIM, m: 8, ef: 40 } },
    g: 1,
    index: {
      texts: async () => TEXTS,
      units: async () => new Map(),
      attributes: async () => new Map(),
      elements: async () => new Map(),
      idMap: async () => [],
      replace: (_key: string, value: unknown) => replaced.push(value),
    },
    log: { info: () => undefined, warn: () => undefined },
    progress: new Progress(out, 'tqdm').stage('HNSW pipeline', 8, 8),
    stop,
    out: new StageOutputs(commit),
  } as unknown as StageContext;
  return { ctx, commit, stop, shown, notes };
}

async function fingerprint(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of ['cache/HNSW.bin', 'cache/id_map.parquet', 'cache/hnsw_graph.parquet']) {
    out[f] = createHash('sha256')
      .update(await readFile(join(root, f)))
      .digest('hex');
  }
  return out;
}

/**
 * Runs `fn` with `performance.now()` moving 100 ms per reading. The live progress line
 * redraws at most every 100 ms, and on a fast idle machine a whole insertion takes less than
 * half a second: with this clock every progress update is a redraw, so the tests check that
 * the stage reports (and can be stopped) between its batches, not how fast the machine is.
 * Batch sizing reads the same clock: each batch seems to take 100 ms, so batches grow to
 * the 256 bound as on a slow machine.
 */
async function withTickingClock<T>(fn: () => Promise<T>): Promise<T> {
  let now = 0;
  const clock = vi.spyOn(performance, 'now').mockImplementation(() => {
    now += 100;
    return now;
  });
  try {
    return await fn();
  } finally {
    clock.mockRestore();
  }
}

describe('HNSW pipeline', () => {
  let reference: Record<string, string>;

  it('inserts in batches and shows its progress while it runs', async () => {
    const root = await mkdtemp(join(tmpdir(), 'noderag-hnsw-stage-'));
    dirs.push(root);
    const r = await run(root);
    await withTickingClock(() => hnswStage(r.ctx, STAGE_OPTIONS));
    await r.commit.commit();
    reference = await fingerprint(root);
    // Many distinct counts between 0 and the total: the line moved during the insertion.
    const between = new Set(r.shown.filter((d) => d > 0 && d < COUNT));
    expect(between.size).toBeGreaterThanOrEqual(5);
    expect(r.shown.at(-1)).toBe(COUNT);
    // The checkpoint is gone once the outputs are staged.
    expect(existsSync(join(root, HNSW_RESUME_DIR))).toBe(false);
  });

  it('stops within a second of a stop request and resumes from its checkpoint with the same bytes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'noderag-hnsw-stage-'));
    dirs.push(root);
    let stoppedAt = 0;
    const first = await run(root, (done, stop) => {
      if (done >= CHECKPOINT_MIN + 800 && !stop.stopping) {
        stoppedAt = Date.now();
        stop.stop('interrupted by SIGINT');
      }
    });
    const error = await withTickingClock(() => hnswStage(first.ctx, STAGE_OPTIONS)).catch((e: unknown) => e);
    const waited = Date.now() - stoppedAt;
    expect(error).toBeInstanceOf(InterruptedError);
    expect(stoppedAt).toBeGreaterThan(0);
    expect(waited).toBeLessThan(1000);
    await first.commit.discard();
    const meta = JSON.parse(await readFile(join(root, HNSW_RESUME_DIR, 'resume.json'), 'utf8'));
    expect(meta.done).toBe(CHECKPOINT_MIN);

    // The next run starts after the checkpoint: nothing before it is inserted again.
    const second = await run(root);
    await withTickingClock(() => hnswStage(second.ctx, STAGE_OPTIONS));
    await second.commit.commit();
    expect(second.notes.join('\n')).toContain(`resuming: ${CHECKPOINT_MIN} of ${COUNT} new vectors`);
    expect(Math.min(...second.shown)).toBe(CHECKPOINT_MIN);
    expect(await fingerprint(root)).toEqual(reference);
    expect(existsSync(join(root, HNSW_RESUME_DIR))).toBe(false);
  });

  it('takes over an insertion started early (past a checkpoint point) with the same bytes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'noderag-hnsw-stage-'));
    dirs.push(root);
    const r = await run(root);
    const infos = capturedInfo(r.ctx);
    startHnswPrebuild(root, r.ctx.config, r.ctx.index);
    // Let it insert past the first checkpoint point, where it links its pending vectors.
    await prebuildReached(root, CHECKPOINT_MIN + 300);
    await withTickingClock(() => hnswStage(r.ctx, STAGE_OPTIONS));
    await r.commit.commit();
    const taken = infos.find((m) => m.includes('inserted while earlier stages ran'));
    expect(taken).toBeDefined();
    expect(Number(/(\d+) of/.exec(taken!)![1])).toBeGreaterThan(CHECKPOINT_MIN);
    expect(hnswPrebuildDone(root)).toBe(-1);
    expect(await fingerprint(root)).toEqual(reference);
  });

  it('takes over an insertion fed in uneven pieces before the commit, with the same bytes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'noderag-hnsw-stage-'));
    dirs.push(root);
    const r = await run(root);
    const infos = capturedInfo(r.ctx);
    const nodes = [...TEXTS.values()].map((t) => ({ id: t.hashId, vector: t.embedding }));
    // As the Embedding stage feeds: batches of its size, across a checkpoint point; the
    // insertion waits for whole native batches while it is open.
    let fed = 0;
    for (const n of [100, 37, 300, 3800, 500]) {
      feedHnswPrebuild(root, r.ctx.config, nodes.slice(fed, fed + n));
      fed += n;
    }
    await prebuildReached(root, CHECKPOINT_MIN + 256);
    expect(hnswPrebuildDone(root)).toBeLessThanOrEqual(fed);
    feedHnswPrebuild(root, r.ctx.config, nodes.slice(fed, 6000));
    // The commit closes it: the rest of what was fed is inserted, nothing is read again.
    startHnswPrebuild(root, r.ctx.config, r.ctx.index);
    await prebuildReached(root, 6000);
    expect(hnswPrebuildDone(root)).toBe(6000);
    await withTickingClock(() => hnswStage(r.ctx, STAGE_OPTIONS));
    await r.commit.commit();
    const taken = infos.find((m) => m.includes('inserted while earlier stages ran'));
    expect(taken).toContain(`6000 of ${COUNT}`);
    expect(hnswPrebuildDone(root)).toBe(-1);
    expect(await fingerprint(root)).toEqual(reference);
  });

  it('drops an insertion started early from other vectors', async () => {
    const root = await mkdtemp(join(tmpdir(), 'noderag-hnsw-stage-'));
    dirs.push(root);
    const r = await run(root);
    const infos = capturedInfo(r.ctx);
    // Same ids, one vector differs.
    const other = new Map(TEXTS);
    const t0 = TEXTS.get('text-000000')!;
    other.set(t0.hashId, { ...t0, embedding: Float32Array.from(t0.embedding, (x) => x + 0.5) });
    startHnswPrebuild(root, r.ctx.config, { ...r.ctx.index, texts: async () => other } as typeof r.ctx.index);
    await prebuildReached(root, 512);
    await withTickingClock(() => hnswStage(r.ctx, STAGE_OPTIONS));
    await r.commit.commit();
    expect(infos.some((m) => m.includes('inserted while earlier stages ran'))).toBe(false);
    expect(hnswPrebuildDone(root)).toBe(-1);
    expect(await fingerprint(root)).toEqual(reference);
  });

  it('ignores a checkpoint made from other input', async () => {
    const root = await mkdtemp(join(tmpdir(), 'noderag-hnsw-stage-'));
    dirs.push(root);
    const first = await run(root, (done, stop) => {
      if (done > CHECKPOINT_MIN) stop.stop('interrupted by SIGINT');
    });
    await expect(withTickingClock(() => hnswStage(first.ctx, STAGE_OPTIONS))).rejects.toBeInstanceOf(
      InterruptedError,
    );
    await first.commit.discard();
    // Same files, other vectors: the checkpoint's key no longer matches.
    const saved = [...TEXTS.values()].map((t) => t.embedding);
    for (const t of TEXTS.values()) t.embedding = Float32Array.from(t.embedding, (x) => -x);
    try {
      const second = await run(root);
      await hnswStage(second.ctx, STAGE_OPTIONS);
      expect(second.notes.join('\n')).not.toContain('resuming');
      expect(Math.min(...second.shown)).toBe(0);
      await second.commit.discard();
    } finally {
      [...TEXTS.values()].forEach((t, i) => {
        t.embedding = saved[i]!;
      });
    }
  });
});
