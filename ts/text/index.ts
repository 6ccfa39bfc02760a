/**
 * The text core, typed: normal forms, hash ids, o200k_base token counts, chunking and the
 * relationship-string rules. Everything runs in Rust (crates/noderag_text) through the addon.
 */
export { type Chunk, type Chunks, chunkRows, chunkText, chunkTextAsync } from './chunk.js';
export {
  attributeId,
  entityId,
  entityIdOfNormalized,
  hashId,
  highLevelElementId,
  highLevelElementTitleId,
  NODE_TAGS,
  type NodeTag,
  relationshipId,
  semanticUnitId,
  textId,
} from './ids.js';
export type { TextLanguage } from './language.js';
export { cleanText, fold, normEntity, normText } from './normal-forms.js';
export {
  type DroppedTriple,
  finalizeUnit,
  normalizeEntities,
  type ParseMethod,
  parseRelationship,
  parseUnit,
  type RelationshipParse,
  type Triple,
  type UnitParse,
  type UnitRelationships,
} from './relationship.js';
export {
  countTokens,
  countTokensBatch,
  countTokensMemo,
  encodeTokens,
  truncateToTokens,
  warmTokenizer,
} from './tokens.js';
