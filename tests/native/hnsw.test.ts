/**
 * The vector index contract through the addon: typed arrays out, save/load round trip,
 * typed errors that name the file, close semantics.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClosedError, IndexFileError, InvalidArgumentError } from '../../ts/errors.js';
import { exactSearch, VectorIndex, type VectorIndexParams } from '../../ts/vector/index.js';

/** Seeded vectors around a few centres (mulberry32, so every run sees the same data). */
function clustered(n: number, dim: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const centres = Array.from({ length: 8 }, () => Float32Array.from({ length: dim }, () => rand() * 2 - 1));
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = centres[Math.floor(rand() * centres.length)]!;
    for (let j = 0; j < dim; j++) out[i * dim + j] = c[j]! + (rand() - 0.5) * 0.3;
  }
  return out;
}

const dim = 16;
const params: VectorIndexParams = { space: 'l2', dim, m: 12, efConstruction: 64 };
const dir = mkdtempSync(join(tmpdir(), 'noderag-hnsw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

describe('VectorIndex', () => {
  const data = clustered(3000, dim, 1);
  const query = data.slice(5 * dim, 6 * dim);

  it('builds off the main thread and returns typed arrays sorted by distance', async () => {
    const index = await VectorIndex.build(params, data);
    expect(index.size).toBe(3000);
    expect(index.params).toEqual(params);
    const r = index.search(query, 10, 50);
    expect(r.labels).toBeInstanceOf(Uint32Array);
    expect(r.distances).toBeInstanceOf(Float32Array);
    expect(r.labels.length).toBe(10);
    expect(r.labels[0]).toBe(5);
    expect(r.distances[0]).toBe(0);
    for (let i = 1; i < 10; i++) expect(r.distances[i]!).toBeGreaterThanOrEqual(r.distances[i - 1]!);
    // Same answer as exact search at this size and beam.
    const exact = exactSearch(data, dim, 'l2', query, 10);
    expect(Array.from(r.labels)).toEqual(Array.from(exact.labels));
    expect(Array.from(index.searchExact(query, 10).labels)).toEqual(Array.from(exact.labels));
    // k is clamped to the number of vectors.
    expect(index.search(query, 100_000, 10).labels.length).toBe(3000);
    index.close();
  });

  it('adds incrementally with continuing labels, retires labels, exports layer-0 edges', async () => {
    const index = VectorIndex.create(params);
    expect(index.size).toBe(0);
    expect(index.search(query, 5, 10).labels.length).toBe(0);
    expect(index.add(data.subarray(0, 100 * dim))).toBe(0);
    expect(await index.addBatch(data.subarray(100 * dim))).toBe(100);
    expect(index.size).toBe(3000);
    expect(index.search(query, 1, 50).labels[0]).toBe(5);
    index.retire([5]);
    expect(index.retiredCount).toBe(1);
    expect(Array.from(index.search(query, 10, 50).labels)).not.toContain(5);
    const edges = index.layer0Edges();
    expect(edges.src).toBeInstanceOf(Uint32Array);
    expect(edges.dst).toBeInstanceOf(Uint32Array);
    expect(edges.src.length).toBe(edges.dst.length);
    expect(edges.src.length).toBeGreaterThanOrEqual(3000);
    expect(Math.max(...edges.dst)).toBeLessThan(3000);
    index.close();
  });

  it('saves and loads with identical results', async () => {
    const index = await VectorIndex.build({ ...params, space: 'cosine' }, data);
    const file = join(dir, 'HNSW.bin');
    await index.save(file);
    const info = VectorIndex.readHeader(file);
    expect(info).toMatchObject({
      space: 'cosine',
      dim,
      m: 12,
      efConstruction: 64,
      count: 3000,
      library: 'noderag_hnsw',
    });
    const loaded = await VectorIndex.load(file, { expectedDim: dim, expectedCount: 3000 });
    expect(loaded.params.space).toBe('cosine');
    for (let q = 0; q < 20; q++) {
      const v = data.subarray(q * 97 * dim, (q * 97 + 1) * dim);
      const a = index.search(v, 10, 40);
      const b = loaded.search(v, 10, 40);
      expect(Array.from(b.labels)).toEqual(Array.from(a.labels));
      expect(Array.from(b.distances)).toEqual(Array.from(a.distances));
    }
    expect(Array.from(loaded.layer0Edges().dst)).toEqual(Array.from(index.layer0Edges().dst));
    index.close();
    loaded.close();
  });

  it('writes the same bytes on one thread as on several, however the batches are split', async () => {
    const bytes: Buffer[] = [];
    for (const [threads, split] of [
      [1, [3000]],
      [4, [1, 255, 700, 44, 2000]],
      [2, [1000, 1000, 1000]],
    ] as const) {
      const index = VectorIndex.create({ ...params, space: 'cosine' });
      index.setBuildThreads(threads);
      let at = 0;
      for (const n of split) {
        expect(await index.addBatch(data.subarray(at * dim, (at + n) * dim), { deferView: true })).toBe(at);
        at += n;
      }
      const file = join(dir, `threads-${threads}.bin`);
      await index.save(file);
      bytes.push(readFileSync(file));
      // Still searchable after the save linked the last, incomplete batch.
      expect(index.search(query, 1, 40).labels[0]).toBe(5);
      index.close();
    }
    expect(bytes[1]!.equals(bytes[0]!)).toBe(true);
    expect(bytes[2]!.equals(bytes[0]!)).toBe(true);
    expect(catchError(() => VectorIndex.create(params).setBuildThreads(0))).toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('loads for search in place: creates nothing beside the file, removes what killed loads left', async () => {
    const index = await VectorIndex.build(params, data.subarray(0, 1500 * dim));
    const folder = mkdtempSync(join(dir, 'inplace-'));
    const file = join(folder, 'HNSW.bin');
    await index.save(file);
    // Left by a load killed with kill -9 (its process is gone), and by an older version
    // (no process id in the name, an hour old).
    const dead = join(folder, '.hnsw-scratch-4000000000-Ab12Cd');
    mkdirSync(dead);
    writeFileSync(join(dead, 'index.hnsw.data'), new Uint8Array(1 << 16));
    const legacy = join(folder, '.hnsw-scratch-Zx98Yw');
    mkdirSync(legacy);
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(legacy, hourAgo, hourAgo);

    const created: string[] = [];
    // Every name that appears or disappears, except the two leftovers being removed.
    const watcher = watch(folder, (_event, name) => {
      if (name && !name.includes('Ab12Cd') && !name.includes('Zx98Yw')) created.push(name);
    });
    const loaded = await VectorIndex.load(file, { expectedDim: dim, expectedCount: 1500 });
    await new Promise((r) => setTimeout(r, 50));
    watcher.close();
    expect(created).toEqual([]);
    expect(readdirSync(folder)).toEqual(['HNSW.bin']);
    expect(Array.from(loaded.search(query, 5, 40).labels)).toEqual(
      Array.from(index.search(query, 5, 40).labels),
    );
    // Read in place, it cannot grow or be saved; loaded for update it can.
    expect(catchError(() => loaded.add(query))).toBeInstanceOf(InvalidArgumentError);
    await expect(loaded.addBatch(query)).rejects.toThrow(/loaded for searching only/);
    await expect(loaded.save(join(folder, 'copy.bin'))).rejects.toBeInstanceOf(InvalidArgumentError);
    const writable = await VectorIndex.load(file, { expectedDim: dim, forUpdate: true });
    expect(await writable.addBatch(query)).toBe(1500);
    expect(readdirSync(folder)).toEqual(['HNSW.bin']);
    writable.close();
    loaded.close();
    index.close();
  });

  it('reports damaged, missing and mismatched files as IndexFileError naming the file', async () => {
    const index = await VectorIndex.build(params, data.subarray(0, 500 * dim));
    const good = join(dir, 'good.bin');
    await index.save(good);
    index.close();
    const bytes = readFileSync(good);

    const corrupt = join(dir, 'corrupt.bin');
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 100] = flipped[flipped.length - 100]! ^ 0xff;
    writeFileSync(corrupt, flipped);
    const e1 = await VectorIndex.load(corrupt, { expectedDim: dim }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(IndexFileError);
    expect((e1 as IndexFileError).code).toBe('NATIVE_CORRUPT_FILE');
    expect((e1 as IndexFileError).message).toContain('corrupt.bin');

    const truncated = join(dir, 'truncated.bin');
    writeFileSync(truncated, bytes.subarray(0, bytes.length >> 1));
    const e2 = await VectorIndex.load(truncated, { expectedDim: dim }).catch((e: unknown) => e);
    expect((e2 as IndexFileError).code).toBe('NATIVE_CORRUPT_FILE');
    expect((e2 as IndexFileError).message).toContain('truncated.bin');

    const e3 = await VectorIndex.load(join(dir, 'absent.bin'), { expectedDim: dim }).catch((e: unknown) => e);
    expect(e3).toBeInstanceOf(IndexFileError);
    expect((e3 as IndexFileError).code).toBe('NATIVE_IO');
    expect((e3 as IndexFileError).message).toContain('absent.bin');

    const e4 = await VectorIndex.load(good, { expectedDim: dim + 1 }).catch((e: unknown) => e);
    expect(e4).toBeInstanceOf(IndexFileError);
    expect((e4 as IndexFileError).code).toBe('NATIVE_DIMENSION_MISMATCH');
    expect((e4 as IndexFileError).message).toContain('good.bin');

    const e5 = catchError(() => VectorIndex.readHeader(corrupt.replace('corrupt', 'absent')));
    expect(e5).toBeInstanceOf(IndexFileError);

    // The intact file still loads.
    const ok = await VectorIndex.load(good, { expectedDim: dim, expectedCount: 500 });
    expect(ok.size).toBe(500);
    ok.close();
  });

  it('rejects wrong-length and non-finite input with InvalidArgumentError', () => {
    const index = VectorIndex.create(params);
    const e1 = catchError(() => index.add(new Float32Array(dim + 1)));
    expect(e1).toBeInstanceOf(InvalidArgumentError);
    expect((e1 as InvalidArgumentError).code).toBe('NATIVE_INVALID_ARGUMENT');
    index.add(data.subarray(0, 10 * dim));
    expect(catchError(() => index.search(new Float32Array(dim - 1), 1, 10))).toBeInstanceOf(
      InvalidArgumentError,
    );
    const nan = new Float32Array(dim).fill(Number.NaN);
    expect(catchError(() => index.search(nan, 1, 10))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => index.search(query, -1, 10))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => index.retire([10]))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => VectorIndex.create({ ...params, m: 1 }))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => exactSearch(data, 7, 'l2', query, 1))).toBeInstanceOf(InvalidArgumentError);
    index.close();
  });

  it('throws ClosedError on use after close, and close is idempotent', () => {
    const index = VectorIndex.create(params);
    index.add(data.subarray(0, 10 * dim));
    index.close();
    index.close();
    const e = catchError(() => index.search(query, 1, 10));
    expect(e).toBeInstanceOf(ClosedError);
    expect((e as ClosedError).code).toBe('NATIVE_CLOSED');
    expect(catchError(() => index.size)).toBeInstanceOf(ClosedError);
    expect(catchError(() => index.add(query))).toBeInstanceOf(ClosedError);
  });
});
