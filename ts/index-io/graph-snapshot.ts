/**
 * The search graph's inputs in the form search needs (cache/search_graph.bin): a versioned,
 * checksummed binary file derived from graph_nodes, graph_edges and hnsw_graph.parquet, so
 * loading an index reads the graph as typed arrays with no string keys on the hot path.
 * The parquet tables stay the interchange format; this file is a derived cache of them.
 *
 * Layout: `NRSG`, u32 version, u32 header length, the header (JSON), zero padding to a
 * multiple of 8, then the payload sections, each padded to 8 bytes:
 *   ids (ASCII, joined by '\n'; dense node order = ascending hash id), types u8[n],
 *   base edges src u32[m], dst u32[m], weight f64[m],
 *   base adjacency (CSR, both directions) offsets u32[n+1], targets u32[2m],
 *   similarity pairs src u32[s], dst u32[s].
 * The header names the SHA-256 of the three tables it was derived from and of the payload;
 * a reader uses the file only when both match (else it falls back to the tables).
 *
 * It is written in the same staged commit as the tables it derives from (ts/indexing/commit.ts).
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { NODE_TYPES } from '../model/types.js';
import { CACHE_FILES } from '../project/layout.js';
import { TableReader } from './columns.js';
import { readTableFile } from './parquet.js';
import { TABLES } from './tables.js';

export const GRAPH_SNAPSHOT_FILE = CACHE_FILES.searchGraph;
/** The tables the snapshot is derived from (project-relative). */
export const GRAPH_SNAPSHOT_SOURCES = [
  CACHE_FILES.graphNodes,
  CACHE_FILES.graphEdges,
  CACHE_FILES.hnswGraph,
] as const;

const MAGIC = 0x4753524e; // 'NRSG' little-endian
const VERSION = 1;

interface Header {
  sources: Record<string, string>;
  types: string[];
  n: number;
  m: number;
  s: number;
  idBytes: number;
  payloadSha256: string;
}

export interface GraphSnapshot {
  /** Hash ids in ascending order; position = dense node index. */
  ids: string[];
  /** Index into NODE_TYPES per node. */
  types: Uint8Array;
  edges: { src: Uint32Array; dst: Uint32Array; weight: Float64Array };
  adjacency: { offsets: Uint32Array; targets: Uint32Array };
  similarity: { src: Uint32Array; dst: Uint32Array };
}

/** Why a snapshot could not be derived (the tables are then the only source; not an error). */
export class SnapshotUnavailable extends Error {}

const pad8 = (x: number) => (x + 7) & ~7;

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Undirected edge list → adjacency lists (counting sort: two passes, no per-node arrays). */
export function adjacencyOf(
  n: number,
  edges: { src: Uint32Array; dst: Uint32Array },
): { offsets: Uint32Array; targets: Uint32Array } {
  const offsets = new Uint32Array(n + 1);
  const m = edges.src.length;
  for (let i = 0; i < m; i++) {
    offsets[edges.src[i]! + 1]!++;
    offsets[edges.dst[i]! + 1]!++;
  }
  for (let i = 0; i < n; i++) offsets[i + 1]! += offsets[i]!;
  const fill = offsets.slice(0, n);
  const targets = new Uint32Array(2 * m);
  for (let i = 0; i < m; i++) {
    const u = edges.src[i]!;
    const v = edges.dst[i]!;
    targets[fill[u]!++] = v;
    targets[fill[v]!++] = u;
  }
  return { offsets, targets };
}

/** Node indexes of a dictionary-encoded endpoint column. */
function endpoints(table: TableReader, name: string, indexOf: ReadonlyMap<string, number>): Uint32Array {
  const { keys, values } = table.utf8Dictionary(name);
  const nodeOf = Int32Array.from(values, (id) => indexOf.get(id) ?? -1);
  const out = new Uint32Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const node = nodeOf[keys[i]!]!;
    if (node < 0) {
      throw new SnapshotUnavailable(`${table.label}: row ${i} names ${values[keys[i]!]}, not in the graph`);
    }
    out[i] = node;
  }
  return out;
}

/**
 * Derives the snapshot from the three tables at `paths` (project-relative → absolute) whose
 * SHA-256 are `sources`. Throws SnapshotUnavailable when the tables cannot be represented
 * (the loader then reports their damage itself, from the tables).
 */
export async function deriveGraphSnapshot(
  pathOf: (relative: string) => string,
  sources: Record<string, string>,
): Promise<Uint8Array> {
  const [nodesT, edgesT, simT] = await Promise.all([
    readTableFile(pathOf(CACHE_FILES.graphNodes), TABLES.graphNodes.columns(['id'], ['type'])),
    readTableFile(
      pathOf(CACHE_FILES.graphEdges),
      TABLES.graphEdges.columns(['weight'], ['source', 'target']),
    ),
    readTableFile(pathOf(CACHE_FILES.hnswGraph), TABLES.hnswGraph.columns([], ['source', 'target'])),
  ]);
  const nodes = new TableReader(TABLES.graphNodes.file, nodesT);
  const ids = nodes.utf8('id');
  const n = ids.length;
  const typeDict = nodes.utf8Dictionary('type');
  const codeOfKey = typeDict.values.map((t) => (NODE_TYPES as readonly string[]).indexOf(t));
  const types = new Uint8Array(n);
  const indexOf = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    // Ascending, ASCII, no separator: otherwise only the tables can say what is wrong.
    if (i > 0 && !(ids[i - 1]! < id)) throw new SnapshotUnavailable('graph node ids are not ascending');
    if (!/^[\x21-\x7e]+$/.test(id)) throw new SnapshotUnavailable(`graph node id ${JSON.stringify(id)}`);
    const code = codeOfKey[typeDict.keys[i]!]!;
    if (code < 0) throw new SnapshotUnavailable('unknown node type');
    types[i] = code;
    indexOf.set(id, i);
  }
  const edgeTable = new TableReader(TABLES.graphEdges.file, edgesT);
  const simTable = new TableReader(TABLES.hnswGraph.file, simT);
  const src = endpoints(edgeTable, 'source', indexOf);
  const dst = endpoints(edgeTable, 'target', indexOf);
  const weight = Float64Array.from(edgeTable.int('weight'));
  if (weight.some((w) => !(w > 0))) throw new SnapshotUnavailable('a base edge weight is not positive');
  const simSrc = endpoints(simTable, 'source', indexOf);
  const simDst = endpoints(simTable, 'target', indexOf);
  const adjacency = adjacencyOf(n, { src, dst });

  const idBytes = Buffer.from(ids.join('\n'), 'latin1');
  const m = src.length;
  const s = simSrc.length;
  const sections: Uint8Array[] = [
    idBytes,
    types,
    new Uint8Array(src.buffer),
    new Uint8Array(dst.buffer),
    new Uint8Array(weight.buffer),
    new Uint8Array(adjacency.offsets.buffer),
    new Uint8Array(adjacency.targets.buffer),
    new Uint8Array(simSrc.buffer),
    new Uint8Array(simDst.buffer),
  ];
  const payload = new Uint8Array(sections.reduce((sum, x) => sum + pad8(x.byteLength), 0));
  let at = 0;
  for (const x of sections) {
    payload.set(x, at);
    at += pad8(x.byteLength);
  }
  const header: Header = {
    sources,
    types: [...NODE_TYPES],
    n,
    m,
    s,
    idBytes: idBytes.byteLength,
    payloadSha256: sha256(payload),
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const start = pad8(12 + headerBytes.byteLength);
  const out = Buffer.alloc(start + payload.byteLength);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeUInt32LE(headerBytes.byteLength, 8);
  out.set(headerBytes, 12);
  out.set(payload, start);
  return out;
}

function parseHeader(buf: Buffer): { header: Header; start: number } | null {
  if (buf.byteLength < 12 || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== VERSION) return null;
  const len = buf.readUInt32LE(8);
  if (12 + len > buf.byteLength) return null;
  try {
    const header = JSON.parse(buf.toString('utf8', 12, 12 + len)) as Header;
    for (const k of ['n', 'm', 's', 'idBytes'] as const) {
      if (!Number.isSafeInteger(header[k]) || header[k] < 0) return null;
    }
    if (typeof header.sources !== 'object' || !Array.isArray(header.types)) return null;
    return { header, start: pad8(12 + len) };
  } catch {
    return null;
  }
}

function sourcesMatch(header: Header, expected: Record<string, string>): boolean {
  return GRAPH_SNAPSHOT_SOURCES.every(
    (f) => typeof expected[f] === 'string' && header.sources[f] === expected[f],
  );
}

/**
 * The snapshot at `path` if it is whole (payload checksum, sizes, ranges) and was derived from
 * tables with the SHA-256 in `expected`; null otherwise (missing, stale, damaged, other version).
 */
export async function readGraphSnapshot(
  path: string,
  expected: Record<string, string>,
): Promise<GraphSnapshot | null> {
  let buf: Buffer;
  try {
    buf = await readAligned(path);
  } catch {
    return null;
  }
  return decodeGraphSnapshot(buf, expected);
}

/** Whether the file at `path` is a whole snapshot of the tables with the SHA-256 in `expected`. */
export async function graphSnapshotCurrent(path: string, expected: Record<string, string>): Promise<boolean> {
  return (await readGraphSnapshot(path, expected)) !== null;
}

/** The whole file in a buffer of its own (offset 0, so 8-aligned sections can be viewed in place). */
async function readAligned(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const buf = Buffer.from(new ArrayBuffer(size));
    let at = 0;
    while (at < size) {
      const { bytesRead } = await file.read(buf, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === size ? buf : buf.subarray(0, at);
  } finally {
    await file.close();
  }
}

export function decodeGraphSnapshot(buf: Buffer, expected: Record<string, string>): GraphSnapshot | null {
  const parsed = parseHeader(buf);
  if (!parsed) return null;
  const { header, start } = parsed;
  if (!sourcesMatch(header, expected)) return null;
  const { n, m, s, idBytes } = header;
  const sizes = [idBytes, n, 4 * m, 4 * m, 8 * m, 4 * (n + 1), 8 * m, 4 * s, 4 * s];
  const total = sizes.reduce((sum, x) => sum + pad8(x), 0);
  if (buf.byteLength !== start + total) return null;
  const payload = buf.subarray(start);
  if (sha256(payload) !== header.payloadSha256) return null;
  // Type codes by name, so a reordered NODE_TYPES cannot mislabel nodes.
  const codeOf = header.types.map((t) => (NODE_TYPES as readonly string[]).indexOf(String(t)));
  if (codeOf.some((c) => c < 0)) return null;

  // Sections are 8-aligned in the file; view them in place when the buffer is, else copy once.
  const inPlace = (buf.byteOffset + start) % 8 === 0;
  const aligned = inPlace ? payload : new Uint8Array(total);
  if (!inPlace) aligned.set(payload);
  const base = aligned.byteOffset;
  const views: { offset: number; length: number }[] = [];
  let at = base;
  for (const size of sizes) {
    views.push({ offset: at, length: size });
    at += pad8(size);
  }
  const u32 = (i: number) => new Uint32Array(aligned.buffer, views[i]!.offset, views[i]!.length / 4);
  const ids =
    n === 0 ? [] : Buffer.from(aligned.buffer, views[0]!.offset, idBytes).toString('latin1').split('\n');
  // Ascending order was checked when the file was written; the payload checksum covers it since.
  if (ids.length !== n) return null;
  const rawTypes = new Uint8Array(aligned.buffer, views[1]!.offset, n);
  const types = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = codeOf[rawTypes[i]!];
    if (c === undefined) return null;
    types[i] = c;
  }
  const src = u32(2);
  const dst = u32(3);
  const weight = new Float64Array(aligned.buffer, views[4]!.offset, m);
  const offsets = u32(5);
  const targets = u32(6);
  const simSrc = u32(7);
  const simDst = u32(8);
  const inRange = (a: Uint32Array) => {
    for (let i = 0; i < a.length; i++) if (a[i]! >= n) return false;
    return true;
  };
  if (!inRange(src) || !inRange(dst) || !inRange(targets) || !inRange(simSrc) || !inRange(simDst))
    return null;
  for (let i = 0; i < m; i++) if (!(weight[i]! > 0)) return null;
  if (offsets[0] !== 0 || offsets[n] !== 2 * m) return null;
  for (let i = 0; i < n; i++) if (offsets[i]! > offsets[i + 1]!) return null;
  return {
    ids,
    types,
    edges: { src, dst, weight },
    adjacency: { offsets, targets },
    similarity: { src: simSrc, dst: simDst },
  };
}
