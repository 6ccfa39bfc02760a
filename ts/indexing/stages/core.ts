/**
 * The text-core functions the stages use (normal forms, hash ids, token counts, chunking,
 * relationship parsing), all from the Rust core through ts/text, gathered in one place so
 * the stages read as the method describes them.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { Language } from '../../config/schema.js';
import type { TextOps } from '../../model/text-ops.js';
import { CACHE_FILES } from '../../project/layout.js';
import * as text from '../../text/index.js';
import { VectorIndex } from '../../vector/index.js';

/** fold and the node ids (ts/text/ids.ts) for ts/model. */
export const textOps: TextOps = text;

/** o200k_base token counts of many texts at once. */
export function countTokensBatch(texts: string[]): ArrayLike<number> {
  return texts.length === 0 ? [] : text.countTokensBatch(texts);
}

interface DocumentChunk {
  text: string;
  tokens: number;
}

/** The chunks of one document (§3.2), off the main thread. */
export async function chunkDocument(documentText: string, chunkSize: number): Promise<DocumentChunk[]> {
  const c = await text.chunkTextAsync(documentText, chunkSize);
  return c.texts.map((t, i) => ({ text: t, tokens: c.tokenCounts[i]! }));
}

export function normalizeEntities(names: readonly string[], language: Language): string[] {
  return text.normalizeEntities(names, language);
}

type ParsedRelationship =
  | { kind: 'parsed'; source: string; relation: string; target: string }
  | { kind: 'needs_repair' }
  | { kind: 'empty' };

/** Steps 1–4 of §3.3 for one relationship string. */
export function parseRelationship(
  s: string,
  unitEntities: readonly string[],
  language: Language,
): ParsedRelationship {
  const r = text.parseRelationship(s, unitEntities, language);
  if (r.status === 'parsed')
    return { kind: 'parsed', source: r.source, relation: r.relation, target: r.target };
  return { kind: r.status };
}

/** A unit's entities and parses, and its finalised form when nothing needs repair. */
interface UnitParse {
  entities: string[];
  parses: ParsedRelationship[];
  final: FinalizedUnit | null;
}

/** `normalizeEntities`, `parseRelationship` per string and, without repairs, `finalizeUnit`. */
export function parseUnitStrings(
  names: readonly string[],
  relationships: readonly string[],
  language: Language,
): UnitParse {
  const r = text.parseUnit(names, relationships, language);
  const parses = r.parses.map(
    (p): ParsedRelationship =>
      p.status === 'parsed'
        ? { kind: 'parsed', source: p.source, relation: p.relation, target: p.target }
        : { kind: p.status },
  );
  return { entities: r.entities, parses, final: r.final };
}

export interface Triple {
  source: string;
  relation: string;
  target: string;
}

interface FinalizedUnit {
  entities: string[];
  relationships: Triple[];
  /** Indexes into the input triples that were dropped, with the reason. */
  dropped: { index: number; reason: 'same_entity' | 'empty_part' }[];
}

/** The rules after parsing (§3.3): normalised ends, same-entity triples dropped, ends appended. */
export function finalizeUnit(
  entities: readonly string[],
  triples: readonly Triple[],
  language: Language,
): FinalizedUnit {
  return text.finalizeUnit(entities, triples, language);
}

/**
 * Checks the SHA-256 of both dumps that HNSW.bin's header records (the header itself is
 * checked by `VectorIndex.readHeader`).
 */
async function hnswDumpsIntact(path: string): Promise<boolean> {
  try {
    const bytes = await readFile(path);
    const headerLen = bytes.readUInt32LE(8);
    const h = JSON.parse(bytes.subarray(12, 12 + headerLen).toString('utf8')) as {
      graph_bytes: number;
      graph_sha256: string;
      data_sha256: string;
    };
    const graphStart = 12 + headerLen;
    const dataStart = graphStart + h.graph_bytes;
    const sha = (from: number, to: number) =>
      createHash('sha256').update(bytes.subarray(from, to)).digest('hex');
    return sha(graphStart, dataStart) === h.graph_sha256 && sha(dataStart, bytes.length) === h.data_sha256;
  } catch {
    return false;
  }
}

/**
 * INIT's deeper check of non-parquet index files whose commit recorded no checksum (an index
 * of an older version): HNSW.bin must have a valid header and match the checksums inside it,
 * text_decomposition.jsonl must be a file.
 */
export async function probeIndexFile(absPath: string, relative: string): Promise<boolean> {
  if (relative === CACHE_FILES.hnswBin) {
    try {
      VectorIndex.readHeader(absPath);
    } catch {
      return false;
    }
    return hnswDumpsIntact(absPath);
  }
  try {
    return (await stat(absPath)).isFile();
  } catch {
    return false;
  }
}
