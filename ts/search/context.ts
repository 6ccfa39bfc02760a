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

/** Items grouped in context order (sections in the fixed order), for structured results. */
export function orderForContext<T extends { type: NodeType }>(items: readonly T[]): T[] {
  const out: T[] = [];
  for (const section of CONTEXT_SECTION_ORDER) for (const i of items) if (i.type === section) out.push(i);
  return out;
}
