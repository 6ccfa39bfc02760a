/**
 * Everything search loads, in the form search needs (cache/search_graph.bin): a versioned,
 * checksummed binary file derived from the search tables (search-tables.ts), so loading an
 * index is a read and a validation: typed arrays viewed in place, no string keys, no Map of
 * ids, node ids and texts made strings only for the nodes a query returns. The parquet tables stay the
 * interchange format; this file is a derived cache of them.
 *
 * Layout: `NRSG`, u32 version, u32 header length, the header (JSON), zero padding to a
 * multiple of 8, then the payload sections, each padded to 8 bytes (sectionSizes below):
 *   id bytes (ASCII, concatenated; dense node order = ascending hash id), types u8[n],
 *   base edges src u32[m], dst u32[m], weight f64[m],
 *   base adjacency (CSR, both directions) offsets u32[n+1], targets u32[2m],
 *   similarity pairs src u32[s], dst u32[s],
 *   node texts offsets u32[n+1] + UTF-8 bytes, docOf / chunkOf / attributeOf / elementOf i32[n],
 *   document paths offsets u32[d+1] + UTF-8 bytes, labelNode i32[l] (−1 = retired),
 *   id table u32[h] (string-columns.ts: hash id → node index + 1), id offsets u32[n+1].
 * The header names the SHA-256 of every table it was derived from and of the payload; a
 * reader uses the file only when the sources match checksums.json and the payload is whole
 * (else it falls back to the tables).
 *
 * It is written by the last commit of a build cycle, beside the tables it derives from
 * (ts/indexing/commit.ts).
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { IndexFileError, IndexNotBuiltError, InternalError } from '../errors.js';
import { NODE_TYPES } from '../model/types.js';
import { CACHE_FILES } from '../project/layout.js';
import { deriveSnapshotPayload, type SnapshotPayload } from '../store/index.js';
import { GRAPH_DELTA_FILE, graphDeltaSize, readGraphDelta } from './graph-delta.js';
import { arraysFromTables, type SearchArrays } from './search-arrays.js';
import { readSearchTables, SEARCH_TABLE_FILES } from './search-tables.js';
import {
  buildIdTable,
  encodeStrings,
  firstNonPrintable,
  idSlotCount,
  lookupId,
  StringColumn,
} from './string-columns.js';
import { TABLES, type TableName } from './tables.js';

export const GRAPH_SNAPSHOT_FILE = CACHE_FILES.searchGraph;
/** The tables the snapshot is derived from (project-relative). */
export const GRAPH_SNAPSHOT_SOURCES: readonly string[] = SEARCH_TABLE_FILES;

const MAGIC = 0x4753524e; // 'NRSG' little-endian
const VERSION = 3;

/** The header's counts: those the native derivation returns with its payload. */
type Counts = Omit<SnapshotPayload, 'payload'>;

interface Header extends Counts {
  sources: Record<string, string>;
  types: string[];
  payloadSha256: string;
}

/**
 * The loaded snapshot. Sizes are checked before it is returned; `verify()` computes the
 * payload's SHA-256 (about 50 ms for the 61 MB of a 1M-edge index with SHA-NI) and must be
 * true before the index is used: search calls it on the main thread while the native parts
 * build on the pool, where the main thread would only wait.
 */
export type GraphSnapshot = SearchArrays & { verify(): boolean };

/** Why a snapshot could not be derived (the tables are then the only source; not an error). */
export class SnapshotUnavailable extends Error {}

const pad8 = (x: number) => (x + 7) & ~7;

/** Section byte sizes, in file order. */
function sectionSizes(h: Header): number[] {
  const { n, m, s, d, l } = h;
  return [
    h.idBytes,
    n,
    4 * m,
    4 * m,
    8 * m,
    4 * (n + 1),
    8 * m,
    4 * s,
    4 * s,
    4 * (n + 1),
    h.textBytes,
    4 * n,
    4 * n,
    4 * n,
    4 * n,
    4 * (d + 1),
    h.docBytes,
    4 * l,
    4 * h.h,
    4 * (n + 1),
  ];
}

const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The arrays as the file's payload sections. */
function encodeArrays(a: SearchArrays): { sections: Uint8Array[]; counts: Counts } {
  const ids = Array.from({ length: a.ids.length }, (_, i) => a.ids.at(i)!);
  const n = ids.length;
  // Ascending and printable ASCII: otherwise only the tables can say what is wrong.
  for (let i = 1; i < n; i++) {
    if (!(ids[i - 1]! < ids[i]!)) throw new SnapshotUnavailable('graph node ids are not ascending');
  }
  const idStrings = encodeStrings(ids);
  const texts = encodeStrings(a.texts);
  const docs = encodeStrings(a.documents);
  if (!idStrings || !texts || !docs) throw new SnapshotUnavailable('texts longer than 4 GiB');
  const bad = firstNonPrintable(idStrings);
  if (bad >= 0) throw new SnapshotUnavailable(`graph node id ${JSON.stringify(ids[bad])}`);
  const idTable = buildIdTable(idStrings);
  const sections = [
    idStrings.bytes,
    a.types,
    a.edges.src,
    a.edges.dst,
    a.edges.weight,
    a.adjacency.offsets,
    a.adjacency.targets,
    a.similarity.src,
    a.similarity.dst,
    texts.offsets,
    texts.bytes,
    a.docOf,
    a.chunkOf,
    a.attributeOf,
    a.elementOf,
    docs.offsets,
    docs.bytes,
    a.labelNode,
    idTable,
    idStrings.offsets,
  ].map(bytesOf);
  return {
    sections,
    counts: {
      n,
      m: a.edges.src.length,
      s: a.similarity.src.length,
      d: a.documents.length,
      l: a.labelNode.length,
      h: idTable.length,
      idBytes: idStrings.bytes.byteLength,
      textBytes: texts.bytes.byteLength,
      docBytes: docs.bytes.byteLength,
    },
  };
}

/**
 * Derives the snapshot from the search tables at `pathOf(relative)` whose SHA-256 are
 * `sources`. Throws SnapshotUnavailable when the tables cannot be represented (references to
 * nodes not in the graph, as in the middle of a sync; the loader then reads the tables itself).
 *
 * Natively (crates/noderag_store/src/snapshot.rs: ids and texts stay bytes, ~10x faster on a
 * large index) unless cache/graph_delta.json has changes to apply, which only the TypeScript
 * path (search-tables.ts) applies; `via: 'tables'` forces that path (tests compare the two).
 */
export async function deriveGraphSnapshot(
  pathOf: (relative: string) => string,
  sources: Record<string, string>,
  options: {
    via?: 'native' | 'tables';
    /** The native derivation (tests replace it to make it fail). */
    nativePayload?: typeof deriveSnapshotPayload;
  } = {},
): Promise<Uint8Array> {
  try {
    const delta = await readGraphDelta(pathOf(GRAPH_DELTA_FILE), GRAPH_DELTA_FILE);
    if (options.via !== 'tables' && (delta === null || graphDeltaSize(delta) === 0)) {
      const paths = SNAPSHOT_TABLE_ORDER.map((name) => pathOf(TABLES[name].file));
      try {
        const { payload, ...counts } = await (options.nativePayload ?? deriveSnapshotPayload)(
          paths,
          NODE_TYPES,
        );
        return withHeader(sources, counts, payload);
      } catch (e) {
        // A fault of the native code (a panic) must not stop the build over a file the
        // TypeScript path derives the same: only damage of the tables is final.
        if (!(e instanceof InternalError)) throw e;
      }
    }
    const { sections, counts } = encodeArrays(arraysFromTables(await readSearchTables(pathOf), false));
    const payload = Buffer.alloc(sections.reduce((sum, x) => sum + pad8(x.byteLength), 0));
    let at = 0;
    for (const x of sections) {
      payload.set(x, at);
      at += pad8(x.byteLength);
    }
    return withHeader(sources, counts, payload);
  } catch (e) {
    if (e instanceof IndexNotBuiltError || e instanceof IndexFileError)
      throw new SnapshotUnavailable(e.message);
    throw e;
  }
}

/** The tables in the order deriveSnapshotPayload takes their paths. */
const SNAPSHOT_TABLE_ORDER = [
  'documents',
  'text',
  'units',
  'entities',
  'relationships',
  'attributes',
  'elements',
  'titles',
  'graphNodes',
  'graphEdges',
  'hnswGraph',
  'idMap',
] as const satisfies readonly TableName[];

/** The file: magic, version, header length, the header (JSON), padding to 8, the payload. */
function withHeader(sources: Record<string, string>, c: Counts, payload: Uint8Array): Buffer {
  const header: Header = {
    sources,
    types: [...NODE_TYPES],
    n: c.n,
    m: c.m,
    s: c.s,
    d: c.d,
    l: c.l,
    h: c.h,
    idBytes: c.idBytes,
    textBytes: c.textBytes,
    docBytes: c.docBytes,
    payloadSha256: createHash('sha256').update(payload).digest('hex'),
  };
  const json = JSON.stringify(header);
  const headerLength = Buffer.byteLength(json);
  const start = pad8(12 + headerLength);
  const out = Buffer.alloc(start + payload.byteLength);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeUInt32LE(headerLength, 8);
  out.write(json, 12, 'utf8');
  out.set(payload, start);
  return out;
}

function parseHeader(buf: Buffer): { header: Header; start: number } | null {
  if (buf.byteLength < 12 || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== VERSION) return null;
  const len = buf.readUInt32LE(8);
  if (12 + len > buf.byteLength) return null;
  try {
    const header = JSON.parse(buf.toString('utf8', 12, 12 + len)) as Header;
    for (const k of ['n', 'm', 's', 'd', 'l', 'h', 'idBytes', 'textBytes', 'docBytes'] as const) {
      if (!Number.isSafeInteger(header[k]) || header[k] < 0) return null;
    }
    if (typeof header.sources !== 'object' || !Array.isArray(header.types)) return null;
    if (typeof header.payloadSha256 !== 'string') return null;
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
 * The snapshot at `path` if its sizes are whole (the payload checksum: `verify()`) and it was
 * derived from tables with the SHA-256 in `expected`; null otherwise (missing, stale, damaged,
 * other version).
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
  const snapshot = await readGraphSnapshot(path, expected);
  return snapshot?.verify() === true;
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
  const { n, m, d, l, h } = header;
  if (h !== idSlotCount(n)) return null;
  const sizes = sectionSizes(header);
  const total = sizes.reduce((sum, x) => sum + pad8(x), 0);
  if (buf.byteLength !== start + total) return null;
  // Type codes by name, so a reordered NODE_TYPES cannot mislabel nodes.
  const codeOf = header.types.map((t) => (NODE_TYPES as readonly string[]).indexOf(String(t)));
  if (codeOf.some((c) => c < 0)) return null;

  // Sections are 8-aligned in the file; view them in place when the buffer is, else copy once.
  const payload = buf.subarray(start);
  const inPlace = (buf.byteOffset + start) % 8 === 0;
  const aligned = inPlace ? payload : new Uint8Array(total);
  if (!inPlace) aligned.set(payload);
  const offsetOf: number[] = [];
  let at = aligned.byteOffset;
  for (const size of sizes) {
    offsetOf.push(at);
    at += pad8(size);
  }
  const u8 = (i: number) => new Uint8Array(aligned.buffer, offsetOf[i]!, sizes[i]!);
  const u32 = (i: number) => new Uint32Array(aligned.buffer, offsetOf[i]!, sizes[i]! / 4);
  const i32 = (i: number) => new Int32Array(aligned.buffer, offsetOf[i]!, sizes[i]! / 4);

  // Ids stay bytes: a string is made only for a node a caller asks about (LoadedIndex.idOf).
  const ids = new StringColumn({ offsets: u32(19), bytes: u8(0) });
  // Type codes are stored in the header's order; remapped only when that order is not ours.
  const rawTypes = u8(1);
  const types = codeOf.every((c, i) => c === i)
    ? rawTypes
    : Uint8Array.from(rawTypes, (t) => codeOf[t] ?? 255);
  const [src, dst, offsets, targets, simSrc, simDst] = [2, 3, 5, 6, 7, 8].map(u32) as Uint32Array[];
  const weight = new Float64Array(aligned.buffer, offsetOf[4]!, m);
  const texts = { offsets: u32(9), bytes: u8(10) };
  const docs = { offsets: u32(15), bytes: u8(16) };
  const [docOf, chunkOf, attributeOf, elementOf, labelNode] = [11, 12, 13, 14, 17].map(i32) as Int32Array[];
  // Values are not range-checked one by one: what the derivation wrote (indexes in range,
  // positive weights, monotone offsets) is covered by the payload checksum, which the loader
  // verifies before it uses anything, and the native builds check their own inputs.
  if (
    offsets![n] !== 2 * m ||
    texts.offsets[n] !== header.textBytes ||
    docs.offsets[d] !== header.docBytes ||
    u32(19)[n] !== header.idBytes
  )
    return null;
  const retiredLabels: number[] = [];
  for (let i = 0; i < l; i++) if (labelNode![i] === -1) retiredLabels.push(i);
  const documentColumn = new StringColumn(docs);
  const idTable = u32(18);
  return {
    ids,
    types,
    texts: new StringColumn(texts),
    indexOf: (id) => lookupId(idTable, id, (node) => ids.asciiEquals(node, id)),
    docOf: docOf!,
    chunkOf: chunkOf!,
    documents: Array.from({ length: d }, (_, i) => documentColumn.at(i)!),
    attributeOf: attributeOf!,
    elementOf: elementOf!,
    labelNode: labelNode!,
    retiredLabels,
    edges: { src: src!, dst: dst!, weight },
    adjacency: { offsets: offsets!, targets: targets! },
    similarity: { src: simSrc!, dst: simDst! },
    verify: () => createHash('sha256').update(aligned).digest('hex') === header.payloadSha256,
  };
}
