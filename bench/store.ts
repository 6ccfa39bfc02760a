/**
 * Parquet store throughput: write and read a text-like table of N rows with a 1536-dim
 * embedding column through the addon (ts/store), next to DuckDB decoding and encoding the
 * same file in the same run (peer). Fixed seed.
 *
 *   npm run bench -- store [rows] [dim]      (defaults 100000 1536)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { readTable, type Table, writeTable } from '../ts/store/index.js';

const rows = Number(process.argv[2] ?? 100_000);
const dim = Number(process.argv[3] ?? 1536);
const REPEATS = 3;

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

function makeTable(): Table {
  const rnd = lcg(42);
  const words = [
    'graph',
    'node',
    'entity',
    'relation',
    'summary',
    'vector',
    'index',
    'query',
    'search',
    'text',
  ];
  const hash: string[] = [];
  const context: string[] = [];
  const ids = new Float64Array(rows);
  const gen = new Int32Array(rows).fill(1);
  const float32 = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    ids[r] = r;
    let h = '';
    for (let i = 0; i < 8; i++)
      h += Math.floor(rnd() * 2 ** 32)
        .toString(16)
        .padStart(8, '0');
    hash.push(h);
    const n = 30 + Math.floor(rnd() * 40);
    const ws: string[] = [];
    for (let i = 0; i < n; i++) ws.push(words[Math.floor(rnd() * words.length)]!);
    context.push(ws.join(' '));
    // Unit-length vectors with Gaussian-ish components, like model embeddings.
    let norm = 0;
    for (let i = 0; i < dim; i++) {
      const v = rnd() + rnd() + rnd() - 1.5;
      float32[r * dim + i] = v;
      norm += v * v;
    }
    const s = 1 / Math.sqrt(norm);
    for (let i = 0; i < dim; i++) float32[r * dim + i]! *= s;
  }
  return {
    numRows: rows,
    columns: [
      { name: 'text_id', kind: 'int64', float64: ids },
      { name: 'hash_id', kind: 'utf8', strings: hash },
      { name: 'context', kind: 'utf8', strings: context },
      { name: 'embedding', kind: 'embedding', dim, float32 },
      { name: 'generation', kind: 'int32', int32: gen },
    ],
  };
}

interface Timing {
  wall: number;
  cpu: number;
}

/** Median wall and CPU milliseconds of REPEATS runs. CPU (all threads of this process,
 * including the libuv worker that runs the native task and DuckDB's thread) is the number
 * to trust on a busy machine; wall time includes waiting for a core. */
async function time(fn: () => Promise<unknown>): Promise<Timing> {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    globalThis.gc?.();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    walls.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1000);
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { wall: median(walls), cpu: median(cpus) };
}

const dir = mkdtempSync(join(tmpdir(), 'noderag-bench-store-'));
try {
  const t0 = performance.now();
  const table = makeTable();
  console.log(
    `data: ${rows} rows, dim ${dim}, generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const ours = join(dir, 'ours.parquet');
  const duckOut = join(dir, 'duck.parquet');
  const rawMB = (rows * dim * 4) / 1e6;

  const write = await time(() => writeTable(ours, table));
  const size = statSync(ours).size;
  const read = await time(() => readTable(ours));
  const readEmb = await time(() =>
    readTable(ours, { columns: [{ name: 'embedding', kind: 'embedding', dim }] }),
  );
  const readText = await time(() => readTable(ours, { columns: ['hash_id', 'context'] }));

  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await conn.run('SET threads = 1'); // our reader/writer use one thread per call
  let duckRead: Timing;
  let duckWrite: Timing;
  try {
    duckRead = await time(async () => {
      await conn.run('DROP TABLE IF EXISTS t');
      await conn.run(`CREATE TABLE t AS SELECT * FROM read_parquet('${ours}')`);
    });
    duckWrite = await time(() => conn.run(`COPY t TO '${duckOut}' (FORMAT parquet, COMPRESSION zstd)`));
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  const duckSize = statSync(duckOut).size;

  const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const rps = (ms: number) => `${Math.round(rows / (ms / 1000)).toLocaleString('en-US')}`;
  const mbs = (ms: number) => `${Math.round(rawMB / (ms / 1000))}`;
  // The MB/s column is only meaningful for operations that move the embedding column.
  const line = (what: string, t: Timing, file = '', withEmbeddings = true) =>
    console.log(
      `| ${what} | ${secs(t.wall)} | ${secs(t.cpu)} | ${rps(t.cpu)} | ${withEmbeddings ? mbs(t.cpu) : ''} | ${file} |`,
    );
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  console.log('');
  console.log('| operation | wall (median of 3) | CPU | rows/s (CPU) | embedding MB/s (CPU) | file |');
  console.log('|---|---|---|---|---|---|');
  line('noderag writeTable', write, mib(size));
  line('noderag readTable, all columns', read);
  line('noderag readTable, embedding only', readEmb);
  line('noderag readTable, hash_id + context', readText, '', false);
  line('DuckDB read_parquet → table (1 thread)', duckRead);
  line('DuckDB COPY → parquet zstd (1 thread)', duckWrite, mib(duckSize));
  console.log('');
  console.log(
    `RESULT store rows=${rows} dim=${dim} write_cpu_s=${(write.cpu / 1000).toFixed(2)} read_cpu_s=${(read.cpu / 1000).toFixed(2)} read_ratio_vs_duckdb=${(duckRead.cpu / read.cpu).toFixed(2)} write_ratio_vs_duckdb=${(duckWrite.cpu / write.cpu).toFixed(2)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
