/**
 * Sources of a retrieval and citations of an answer (issue 16 item 1), built from the
 * context's items (ts/search/retrieve.ts RetrievedItem) without touching the retrieval.
 *
 * The context items are numbered 1…n in context order (the order of `items`, which is the
 * order of the sections in the §6.6 context string). The answer prompt gets the same layout
 * as the §6.6 string with those numbers as `[n]` (`citedContext`), so a model can cite
 * `[n]`; `citedNumbers` reads the numbers an answer used back, and `buildSources` groups the
 * items by input file (path relative to `input/`), with the chunk ids they come from, the
 * numbers of the items from that file and those the answer cited.
 */
import { CONTEXT_SECTION_ORDER, sectionHeader } from './context.js';
import type { RetrievedItem } from './retrieve.js';

/** One input file the context draws on. */
export interface Source {
  /** Path of the input file, relative to `input/`. */
  readonly document: string;
  /** Ids of the text chunks (text nodes) the file's items were taken from, in first-use order. */
  readonly chunks: readonly string[];
  /** Numbers `[n]` of the context items from this file, ascending. */
  readonly items: readonly number[];
  /** The numbers among `items` that the answer cites (always empty for a retrieval). */
  readonly cited: readonly number[];
}

/** One number the answer cites, resolved to its context item. */
export interface Citation {
  n: number;
  /** Node id of the item. */
  id: string;
  type: RetrievedItem['type'];
  /** Input file of the item, or null (a high-level element draws on many). */
  document: string | null;
  /** Text chunk the item was taken from, or null. */
  chunk: string | null;
}

/**
 * The chunk id a context item was taken from (a text item is its own chunk), or null.
 * `position` is the item's index in the items passed along with it, when known.
 */
export type ChunkOf = (item: RetrievedItem, position?: number) => string | null;

const defaultChunkOf: ChunkOf = (item) => (item.type === 'text' ? item.id : null);

/**
 * The answer prompt's context: the §6.6 layout (same section headers and order, one blank
 * line after each section), each item numbered `[n]` across the whole context.
 */
export function citedContext(items: readonly RetrievedItem[]): string {
  const parts: string[] = [];
  const numbered = items.map((item, i) => ({ item, n: i + 1 }));
  for (const section of CONTEXT_SECTION_ORDER) {
    const inSection = numbered.filter((x) => x.item.type === section);
    if (inSection.length === 0) continue;
    parts.push(sectionHeader(section));
    for (const { item, n } of inSection) parts.push(`[${n}] ${item.text.trim()}`);
    parts.push('');
  }
  return parts.length ? `${parts.join('\n')}\n` : '';
}

/**
 * The item numbers an answer cites, ascending and unique: `[3]`, `[1][4]`, `[1, 4]`,
 * `[2-4]`; numbers outside 1…itemCount are ignored.
 */
export function citedNumbers(answer: string, itemCount: number): number[] {
  const found = new Set<number>();
  const add = (n: number) => {
    if (Number.isInteger(n) && n >= 1 && n <= itemCount) found.add(n);
  };
  for (const m of answer.matchAll(/\[(\s*\d+(?:\s*(?:[,;、，]|[-–])\s*\d+)*\s*)\]/gu)) {
    for (const part of m[1]!.split(/[,;、，]/u)) {
      const range = /^\s*(\d+)\s*[-–]\s*(\d+)\s*$/u.exec(part);
      if (range) {
        const a = Number(range[1]);
        const b = Number(range[2]);
        if (b >= a && b - a <= 100) for (let n = a; n <= b; n++) add(n);
      } else add(Number(part.trim()));
    }
  }
  return [...found].sort((a, b) => a - b);
}

/** Input files of the items, in order of first appearance in the context. */
export function buildSources(
  items: readonly RetrievedItem[],
  cited: readonly number[] = [],
  chunkOf: ChunkOf = defaultChunkOf,
): Source[] {
  const citedSet = new Set(cited);
  // Built here, then handed out read-only (results may be shared through the retrieval cache).
  const byDocument = new Map<
    string,
    { document: string; chunks: string[]; items: number[]; cited: number[] }
  >();
  items.forEach((item, i) => {
    if (item.document === null) return;
    let source = byDocument.get(item.document);
    if (!source) {
      source = { document: item.document, chunks: [], items: [], cited: [] };
      byDocument.set(item.document, source);
    }
    const chunk = chunkOf(item, i);
    if (chunk !== null && !source.chunks.includes(chunk)) source.chunks.push(chunk);
    source.items.push(i + 1);
    if (citedSet.has(i + 1)) source.cited.push(i + 1);
  });
  return [...byDocument.values()];
}

/**
 * `JSON.stringify(sources)`, byte for byte, with the strings (document paths, chunk ids)
 * quoted by `quote` (`JSON.stringify` of one string; the engine keeps each one it made):
 * V8's generic serialiser took about four times as long on a typical list of 15 sources.
 */
export function sourcesJson(sources: readonly Source[], quote: (s: string) => string): string {
  let out = '[';
  for (let k = 0; k < sources.length; k++) {
    const s = sources[k]!;
    if (k > 0) out += ',';
    out += `{"document":${quote(s.document)},"chunks":[`;
    for (let c = 0; c < s.chunks.length; c++) {
      if (c > 0) out += ',';
      out += quote(s.chunks[c]!);
    }
    out += `],"items":[${s.items.join(',')}],"cited":[${s.cited.join(',')}]}`;
  }
  return `${out}]`;
}

/** The cited numbers resolved to their items. */
export function buildCitations(
  items: readonly RetrievedItem[],
  cited: readonly number[],
  chunkOf: ChunkOf = defaultChunkOf,
): Citation[] {
  return cited.map((n) => {
    const item = items[n - 1]!;
    return { n, id: item.id, type: item.type, document: item.document, chunk: chunkOf(item, n - 1) };
  });
}

/**
 * The numbered source list appended to a chat answer (the OpenAI-compatible endpoint): one
 * line per cited item, or per source file when nothing was cited.
 */
export function sourceList(sources: readonly Source[], citations: readonly Citation[]): string {
  if (citations.length > 0) {
    return citations.map((c) => `[${c.n}] ${c.document ?? `(${c.type.replace(/_/g, ' ')})`}`).join('\n');
  }
  return sources.map((s) => `[${s.items.join('][')}] ${s.document}`).join('\n');
}
