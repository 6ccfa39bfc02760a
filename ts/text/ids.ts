/**
 * Hash ids (docs/method.md §2.1). `H(tag, s)` is the lowercase hex SHA-256 of `tag + ":" + s`;
 * each helper applies its kind's normalisation first, so callers cannot forget it.
 */
import { callNative, native } from '../native.js';
import type { TextLanguage } from './language.js';

/** Node type names, used as `H` tags. */
export const NODE_TAGS = [
  'text',
  'semantic_unit',
  'entity',
  'relationship',
  'attribute',
  'high_level_element',
  'high_level_element_title',
] as const;
export type NodeTag = (typeof NODE_TAGS)[number];

/** `H(tag, s)` on `s` as given (no normalisation). Throws InvalidArgumentError for a tag with ':'. */
export function hashId(tag: string, s: string): string {
  return callNative(() => native.hashId(tag, s));
}

/** `H("text", norm_text(chunk))`. */
export function textId(chunk: string): string {
  return callNative(() => native.textId(chunk));
}

/** `H("semantic_unit", norm_text(unit))`. */
export function semanticUnitId(unit: string): string {
  return callNative(() => native.semanticUnitId(unit));
}

/** `H("entity", norm_entity(name))`, or null when the name is empty after normalisation. */
export function entityId(name: string, language: TextLanguage): string | null {
  return callNative(() => native.entityId(name, language));
}

/**
 * `H("entity", name)` of a name that is already `norm_entity`-ed (a stored entity `context`,
 * or a name from a parsed decomposition, normalised at parse time).
 */
export function entityIdOfNormalized(name: string): string {
  return hashId('entity', name);
}

/** `H("relationship", lo + ":" + hi)` of two entity ids in either order; null when they are equal. */
export function relationshipId(entityIdA: string, entityIdB: string): string | null {
  return callNative(() => native.relationshipId(entityIdA, entityIdB));
}

/** `H("attribute", entityId)`: one attribute per entity. */
export function attributeId(entityId: string): string {
  return callNative(() => native.attributeId(entityId));
}

/** `H("high_level_element", norm_text(description))`. */
export function highLevelElementId(description: string): string {
  return callNative(() => native.highLevelElementId(description));
}

/** `H("high_level_element_title", elementId)`: one title per element. */
export function highLevelElementTitleId(elementId: string): string {
  return callNative(() => native.highLevelElementTitleId(elementId));
}
