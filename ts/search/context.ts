/**
 * The retrieval context string (docs/method.md §6.6): sections in a fixed order, each a header
 * line of twelve `-`, the type name and thirteen `-`, then numbered items, then one blank
 * line. Items keep search-list order; an empty retrieval is the empty string.
 */
import type { NodeType } from '../model/types.js';
import { countTokens } from '../text/tokens.js';

export const CONTEXT_SECTION_ORDER = [
  'high_level_element',
  'attribute',
  'semantic_unit',
  'text',
  'relationship',
] as const satisfies readonly NodeType[];

export type ContextSection = (typeof CONTEXT_SECTION_ORDER)[number];

/** The header lines, made once: every question's context string and answer prompt uses them. */
const HEADERS = Object.fromEntries(
  CONTEXT_SECTION_ORDER.map((type) => [type, `${'-'.repeat(12)}${type}${'-'.repeat(13)}`]),
) as Record<ContextSection, string>;

export function sectionHeader(type: ContextSection): string {
  return HEADERS[type];
}

export interface ContextItem {
  id: string;
  type: NodeType;
  text: string;
}

/** Builds the context string from items already in order (search list, then relationships). */
export function formatContext(items: readonly ContextItem[]): string {
  // One pass per section over the items, no arrays per section (this runs on every question).
  const parts: string[] = [];
  for (const section of CONTEXT_SECTION_ORDER) {
    let n = 0;
    for (const item of items) {
      if (item.type !== section) continue;
      if (n === 0) parts.push(HEADERS[section]);
      n++;
      parts.push(`${n}. ${item.text.trim()}`);
    }
    if (n > 0) parts.push('');
  }
  return parts.length ? `${parts.join('\n')}\n` : '';
}

/**
 * The piece of the context an item's line adds after its number: a space, its trimmed text and
 * the line break, two for the last item of a section (its blank line follows).
 */
export function itemLine(text: string, lastOfSection: boolean): string {
  return ` ${text.trim()}${lastOfSection ? '\n\n' : '\n'}`;
}

/** o200k_base tokens of each section's header line, and of `n.`, counted once. */
const HEADER_TOKENS = new Map<ContextSection, number>();
const NUMBER_TOKENS: number[] = [];

/**
 * o200k_base tokens of `formatContext(items)`, without making it: the sum of the counts of its
 * header lines, item numbers (`12.`) and item lines (`itemLine`), `lineTokens(i, last)` giving
 * item i's (a caller keeps those per node: a node's line comes back question after question).
 *
 * Exact, because o200k's pre-tokeniser never joins text across these cuts: a pre-token that
 * holds a line break goes on only with more breaks, whitespace or `/`, and every line here
 * starts with a digit or `-`; digits and the dot after them are pre-tokens of their own, and
 * the space after the dot starts the next (crates/noderag_text/src/tokens_memo.rs gives the
 * argument and tests it; tests/native/search-engine.test.ts compares with counting the string).
 */
export function contextTokens(
  items: readonly ContextItem[],
  lineTokens: (i: number, lastOfSection: boolean) => number,
): number {
  let total = 0;
  let n = 0;
  for (let i = 0; i < items.length; i++) {
    const section = items[i]!.type as ContextSection;
    if (n === 0 || items[i - 1]!.type !== section) {
      n = 0;
      let header = HEADER_TOKENS.get(section);
      if (header === undefined) {
        header = countTokens(`${HEADERS[section]}\n`);
        HEADER_TOKENS.set(section, header);
      }
      total += header;
    }
    n++;
    NUMBER_TOKENS[n] ??= countTokens(`${n}.`);
    total += NUMBER_TOKENS[n]! + lineTokens(i, i + 1 === items.length || items[i + 1]!.type !== section);
  }
  return total;
}

/** UTF-8 bytes of ASCII text. */
const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');

/** JSON pieces of the context: its quotes, the escaped line break, headers with theirs. */
const QUOTE = ascii('"');
const EMPTY_JSON = ascii('""');
const LINE = ascii('\\n');
const HEADER_LINES = Object.fromEntries(
  CONTEXT_SECTION_ORDER.map((type) => [type, ascii(`${HEADERS[type]}\\n`)]),
) as Record<ContextSection, Buffer>;
/** `n. ` by n, made as items are numbered. */
const NUMBERS: Buffer[] = [];

function numbered(n: number): Buffer {
  let b = NUMBERS[n];
  if (b === undefined) {
    b = ascii(`${n}. `);
    NUMBERS[n] = b;
  }
  return b;
}

/**
 * The UTF-8 bytes of `JSON.stringify(formatContext(items))` as pieces to be joined in order,
 * made from the items' texts already escaped for JSON and encoded (`escaped(i)`: the UTF-8
 * of `JSON.stringify(items[i].text.trim())` without its quotes). JSON escaping works
 * character by character (a lone surrogate becomes `\uXXXX`), so the escaped pieces joined
 * are the escaped whole, and their bytes its UTF-8: a server replying with the context sends
 * these without building, escaping and encoding 4–10 KB of text on every question. `items`
 * must already be in context order (sections in the fixed order).
 */
export function formatContextJson(
  items: readonly ContextItem[],
  escaped: (i: number) => Uint8Array,
): Uint8Array[] {
  if (items.length === 0) return [EMPTY_JSON];
  const json: Uint8Array[] = [QUOTE];
  let section: NodeType | undefined;
  let n = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.type !== section) {
      if (section !== undefined) json.push(LINE);
      section = item.type;
      n = 0;
      json.push(HEADER_LINES[section as ContextSection]);
    }
    n++;
    json.push(numbered(n), escaped(i), LINE);
  }
  json.push(LINE, QUOTE);
  return json;
}

/** Items grouped in context order (sections in the fixed order), for structured results. */
export function orderForContext<T extends { type: NodeType }>(items: readonly T[]): T[] {
  const out: T[] = [];
  for (const section of CONTEXT_SECTION_ORDER) for (const i of items) if (i.type === section) out.push(i);
  return out;
}
