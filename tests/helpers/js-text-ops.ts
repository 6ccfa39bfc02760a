/**
 * A JS stand-in for the Rust text core's TextOps (ts/indexing/stages/core.ts passes the real
 * ones), good enough for ASCII test data, so the ts/model unit tests run without the addon.
 * `H(tag, s)` is the SHA-256 of `tag:s` as in docs/method.md §2.1.
 */
import { createHash } from 'node:crypto';
import type { TextOps } from '../../ts/model/text-ops.js';

const h = (tag: string, s: string) => createHash('sha256').update(`${tag}:${s}`).digest('hex');
const normText = (s: string) => s.normalize('NFKC').trim().replace(/\s+/g, ' ');

export const jsTextOps: TextOps = {
  fold: (s) => normText(s).toLowerCase(),
  semanticUnitId: (unit) => h('semantic_unit', normText(unit)),
  entityIdOfNormalized: (name) => h('entity', name),
  relationshipId: (a, b) => (a === b ? null : h('relationship', a < b ? `${a}:${b}` : `${b}:${a}`)),
  highLevelElementId: (description) => h('high_level_element', normText(description)),
  highLevelElementTitleId: (elementId) => h('high_level_element_title', elementId),
};
