/**
 * The retrieval context string (docs/method.md §6.6): sections in a fixed order, each a header
 * line of twelve `-`, the type name and thirteen `-`, then numbered items, then one blank
 * line. Items keep search-list order; an empty retrieval is the empty string.
 */
import type { NodeType } from '../model/types.js';

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
 * `formatContext(items)` and that string as a JSON string literal (`JSON.stringify` of it, byte
 * for byte), made in one pass from the items' texts already escaped for JSON (`escaped(i)`:
 * `JSON.stringify(items[i].text.trim())` without its quotes). JSON escaping works character by
 * character, so the escaped pieces joined are the escaped whole; a server that replies with
 * the context sends the second without scanning 4–10 KB of text for characters to escape on
 * every question. `items` must already be in context order (sections in the fixed order).
 */
export function formatContextWithJson(
  items: readonly ContextItem[],
  escaped: (i: number) => string,
): { text: string; json: string } {
  if (items.length === 0) return { text: '', json: '""' };
  const parts: string[] = [];
  const jsonParts: string[] = [];
  let section: NodeType | undefined;
  let n = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.type !== section) {
      if (section !== undefined) {
        parts.push('');
        jsonParts.push('');
      }
      section = item.type;
      n = 0;
      const header = HEADERS[section as ContextSection];
      parts.push(header);
      jsonParts.push(header);
    }
    n++;
    parts.push(`${n}. ${item.text.trim()}`);
    jsonParts.push(`${n}. ${escaped(i)}`);
  }
  parts.push('');
  jsonParts.push('');
  return { text: `${parts.join('\n')}\n`, json: `"${jsonParts.join('\\n')}\\n"` };
}

/** Items grouped in context order (sections in the fixed order), for structured results. */
export function orderForContext<T extends { type: NodeType }>(items: readonly T[]): T[] {
  const out: T[] = [];
  for (const section of CONTEXT_SECTION_ORDER) for (const i of items) if (i.type === section) out.push(i);
  return out;
}
