/**
 * Splits a retrieval context string (docs/method.md §6.6, ts/search/context.ts) back into its
 * sections by node type, so the page can show each section on its own. Parsing the answer's
 * own context (rather than retrieving again) shows exactly what the model was given.
 */
import { CONTEXT_SECTION_ORDER, type ContextSection, sectionHeader } from '../search/context.js';

export interface ContextSectionItems {
  type: ContextSection;
  items: string[];
}

export function splitContext(context: string): ContextSectionItems[] {
  const headers = new Map<string, ContextSection>(CONTEXT_SECTION_ORDER.map((t) => [sectionHeader(t), t]));
  const out: ContextSectionItems[] = [];
  let current: ContextSectionItems | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (current && lines.length > 0) current.items.push(lines.join('\n').trim());
    lines = [];
  };
  for (const line of context.split('\n')) {
    const type = headers.get(line);
    if (type) {
      flush();
      current = { type, items: [] };
      out.push(current);
      continue;
    }
    if (!current) continue;
    // Items are numbered 1., 2., … in order; a line starting with the next number opens one.
    const next = `${current.items.length + (lines.length > 0 ? 2 : 1)}. `;
    if (line.startsWith(next)) {
      flush();
      lines.push(line.slice(next.length));
    } else if (lines.length > 0) lines.push(line);
  }
  flush();
  return out;
}
