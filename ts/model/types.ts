/**
 * The in-memory shape of an index, one interface per table of docs/method.md §5. The build
 * pipeline works on these; ts/store converts them to and from parquet column arrays.
 * Rows hold plain values; vectors are Float32Array or null (not computed yet).
 */

export const NODE_TYPES = [
  'text',
  'semantic_unit',
  'entity',
  'relationship',
  'attribute',
  'high_level_element',
  'high_level_element_title',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** Dense numeric code of a node type, as the native graph stores it (index into NODE_TYPES). */
export function nodeTypeCode(t: NodeType): number {
  return NODE_TYPES.indexOf(t);
}

export interface DocumentRow {
  docId: number;
  docHashId: string;
  path: string;
  format: string;
  textIds: number[];
  textHashIds: string[];
  charCount: number;
  generation: number;
}

export interface TextRow {
  textId: number;
  hashId: string;
  context: string;
  docId: number;
  docHashId: string;
  chunkIndex: number;
  tokenCount: number;
  embedding: Float32Array | null;
  generation: number;
}

export interface SemanticUnitRow {
  hashId: string;
  humanReadableId: number;
  context: string;
  textHashId: string;
  textHashIds: string[];
  weight: number;
  embedding: Float32Array | null;
  generation: number;
  updatedGeneration: number;
}

export interface EntityRow {
  hashId: string;
  humanReadableId: number;
  context: string;
  textHashId: string;
  weight: number;
  generation: number;
  updatedGeneration: number;
}

export interface RelationshipRow {
  hashId: string;
  humanReadableId: number;
  /** The two entity ids, ascending. */
  uniqueRelationship: [string, string];
  /** Distinct phrases `A <relation> B`, first-seen order. */
  relations: string[];
  textHashId: string;
  weight: number;
  generation: number;
  updatedGeneration: number;
}

export interface AttributeRow {
  hashId: string;
  humanReadableId: number;
  /** The entity id. */
  node: string;
  context: string;
  weight: number;
  embedding: Float32Array | null;
  generation: number;
  updatedGeneration: number;
}

export interface HighLevelElementRow {
  hashId: string;
  humanReadableId: number;
  context: string;
  titleHashId: string;
  communityId: number;
  relatedNodes: string[];
  weight: number;
  embedding: Float32Array | null;
  generation: number;
  updatedGeneration: number;
}

export interface TitleRow {
  hashId: string;
  humanReadableId: number;
  context: string;
  /** The element id. */
  relatedNode: string;
  weight: number;
  generation: number;
}

export interface GraphNode {
  type: NodeType;
  weight: number;
  generation: number;
  updatedGeneration: number;
}

export interface GraphEdge {
  /** source < target (code-point order of the hash ids). */
  source: string;
  target: string;
  weight: number;
  generation: number;
}

/** Per-kind human-readable counters, `info/indices.json` (docs/method.md §2.2). */
export interface Counters {
  document_index: number;
  text_unit_index: number;
  semantic_unit_index: number;
  entity_index: number;
  relation_index: number;
  attribute_index: number;
  community_summary_index: number;
  high_level_element_index: number;
}

export function emptyCounters(): Counters {
  return {
    document_index: 0,
    text_unit_index: 0,
    semantic_unit_index: 0,
    entity_index: 0,
    relation_index: 0,
    attribute_index: 0,
    community_summary_index: 0,
    high_level_element_index: 0,
  };
}

/** One parsed unit of a decomposition record (docs/method.md §5, `text_decomposition.jsonl`). */
export interface ParsedUnit {
  semantic_unit: string;
  entities: string[];
  relationships: { source: string; relation: string; target: string }[];
}

/** One line of `text_decomposition.jsonl`. */
export interface DecompositionRecord {
  text_hash_id: string;
  text_id: number;
  generation: number;
  status: 'ok' | 'failed';
  response: unknown;
  units: ParsedUnit[];
  dropped: { input: string; reason: string }[];
  error: string | null;
}
