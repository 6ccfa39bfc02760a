/**
 * The parquet tables of method.md §5 as conversions between ts/model rows and column
 * buffers: one `xxxToTable` / `xxxFromTable` pair per file. Row order on disk is part of the
 * format (sorted by number; graph_nodes by id; edge tables by source then target), so the
 * writers sort and the same rows always give the same bytes.
 */

import { IndexFileError } from '../errors.js';
import { edgeKey } from '../model/graph-store.js';
import type {
  AttributeRow,
  DocumentRow,
  EntityRow,
  GraphEdge,
  GraphNode,
  HighLevelElementRow,
  NodeType,
  RelationshipRow,
  SemanticUnitRow,
  TextRow,
  TitleRow,
} from '../model/types.js';
import { NODE_TYPES } from '../model/types.js';
import {
  booleanColumn,
  type ColumnRequest,
  embeddingColumn,
  int32Column,
  int64Column,
  int64ListColumn,
  type Table,
  type TableReader,
  utf8Column,
  utf8ListColumn,
} from './columns.js';

/** Code-point order of ASCII hash ids (plain `<` is exact for them). */
function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function table(numRows: number, columns: Table['columns']): Table {
  return { numRows, columns };
}

function constant(name: string, value: string, rows: number): ReturnType<typeof utf8Column> {
  return utf8Column(name, new Array<string>(rows).fill(value));
}

function checkType(reader: TableReader, expected: string): void {
  if (!reader.has('type')) return;
  const types = reader.utf8('type');
  const bad = types.findIndex((t) => t !== expected);
  if (bad >= 0) {
    throw new IndexFileError(
      'index_damaged',
      `${reader.label}: row ${bad} has type ${JSON.stringify(types[bad])}, expected ${expected}`,
    );
  }
}

// ----------------------------------------------------------------------------- documents

export function documentsToTable(rows: Iterable<DocumentRow>): Table {
  const r = [...rows].sort((a, b) => a.docId - b.docId);
  return table(r.length, [
    int64Column(
      'doc_id',
      r.map((x) => x.docId),
    ),
    utf8Column(
      'doc_hash_id',
      r.map((x) => x.docHashId),
    ),
    utf8Column(
      'path',
      r.map((x) => x.path),
    ),
    utf8Column(
      'format',
      r.map((x) => x.format),
    ),
    int64ListColumn(
      'text_id',
      r.map((x) => x.textIds),
    ),
    utf8ListColumn(
      'text_hash_id',
      r.map((x) => x.textHashIds),
    ),
    int64Column(
      'char_count',
      r.map((x) => x.charCount),
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
  ]);
}

export const DOCUMENT_COLUMNS: ColumnRequest[] = [
  { name: 'doc_id', kind: 'int64' },
  { name: 'doc_hash_id', kind: 'utf8' },
  { name: 'path', kind: 'utf8' },
  { name: 'format', kind: 'utf8' },
  { name: 'text_id', kind: 'int64_list' },
  { name: 'text_hash_id', kind: 'utf8_list' },
  { name: 'char_count', kind: 'int64' },
  { name: 'generation', kind: 'int32' },
];

export function documentsFromTable(t: TableReader): DocumentRow[] {
  const docId = t.int('doc_id');
  const docHashId = t.utf8('doc_hash_id');
  const path = t.utf8('path');
  const format = t.utf8('format');
  const textIds = t.int64List('text_id');
  const textHashIds = t.utf8List('text_hash_id');
  const charCount = t.int('char_count');
  const generation = t.int('generation');
  return docId.map((_, i) => ({
    docId: docId[i]!,
    docHashId: docHashId[i]!,
    path: path[i]!,
    format: format[i]!,
    textIds: textIds[i]!,
    textHashIds: textHashIds[i]!,
    charCount: charCount[i]!,
    generation: generation[i]!,
  }));
}

// ----------------------------------------------------------------------------- text

export function textToTable(rows: Iterable<TextRow>, dim: number): Table {
  const r = [...rows].sort((a, b) => a.textId - b.textId);
  return table(r.length, [
    int64Column(
      'text_id',
      r.map((x) => x.textId),
    ),
    utf8Column(
      'hash_id',
      r.map((x) => x.hashId),
    ),
    constant('type', 'text', r.length),
    utf8Column(
      'context',
      r.map((x) => x.context),
    ),
    int64Column(
      'doc_id',
      r.map((x) => x.docId),
    ),
    utf8Column(
      'doc_hash_id',
      r.map((x) => x.docHashId),
    ),
    int32Column(
      'chunk_index',
      r.map((x) => x.chunkIndex),
    ),
    int32Column(
      'token_count',
      r.map((x) => x.tokenCount),
    ),
    embeddingColumn(
      'embedding',
      r.map((x) => x.embedding),
      dim,
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
  ]);
}

export function textColumns(dim: number): ColumnRequest[] {
  return [
    { name: 'text_id', kind: 'int64' },
    { name: 'hash_id', kind: 'utf8' },
    { name: 'type', kind: 'utf8' },
    { name: 'context', kind: 'utf8' },
    { name: 'doc_id', kind: 'int64' },
    { name: 'doc_hash_id', kind: 'utf8' },
    { name: 'chunk_index', kind: 'int32' },
    { name: 'token_count', kind: 'int32' },
    { name: 'embedding', kind: 'embedding', dim },
    { name: 'generation', kind: 'int32' },
  ];
}

export function textFromTable(t: TableReader): TextRow[] {
  checkType(t, 'text');
  const textId = t.int('text_id');
  const hashId = t.utf8('hash_id');
  const context = t.utf8('context');
  const docId = t.int('doc_id');
  const docHashId = t.utf8('doc_hash_id');
  const chunkIndex = t.int('chunk_index');
  const tokenCount = t.int('token_count');
  const embedding = t.embedding('embedding');
  const generation = t.int('generation');
  return textId.map((_, i) => ({
    textId: textId[i]!,
    hashId: hashId[i]!,
    context: context[i]!,
    docId: docId[i]!,
    docHashId: docHashId[i]!,
    chunkIndex: chunkIndex[i]!,
    tokenCount: tokenCount[i]!,
    embedding: embedding[i]!,
    generation: generation[i]!,
  }));
}

// ----------------------------------------------------------------------------- semantic units

export function unitsToTable(rows: Iterable<SemanticUnitRow>, dim: number): Table {
  const r = [...rows].sort((a, b) => a.humanReadableId - b.humanReadableId);
  return table(r.length, [
    utf8Column(
      'hash_id',
      r.map((x) => x.hashId),
    ),
    int64Column(
      'human_readable_id',
      r.map((x) => x.humanReadableId),
    ),
    constant('type', 'semantic_unit', r.length),
    utf8Column(
      'context',
      r.map((x) => x.context),
    ),
    utf8Column(
      'text_hash_id',
      r.map((x) => x.textHashId),
    ),
    utf8ListColumn(
      'text_hash_ids',
      r.map((x) => x.textHashIds),
    ),
    int64Column(
      'weight',
      r.map((x) => x.weight),
    ),
    embeddingColumn(
      'embedding',
      r.map((x) => x.embedding),
      dim,
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
    int32Column(
      'updated_generation',
      r.map((x) => x.updatedGeneration),
    ),
  ]);
}

export function unitColumns(dim: number): ColumnRequest[] {
  return [
    { name: 'hash_id', kind: 'utf8' },
    { name: 'human_readable_id', kind: 'int64' },
    { name: 'type', kind: 'utf8' },
    { name: 'context', kind: 'utf8' },
    { name: 'text_hash_id', kind: 'utf8' },
    { name: 'text_hash_ids', kind: 'utf8_list' },
    { name: 'weight', kind: 'int64' },
    { name: 'embedding', kind: 'embedding', dim },
    { name: 'generation', kind: 'int32' },
    { name: 'updated_generation', kind: 'int32' },
  ];
}

export function unitsFromTable(t: TableReader): SemanticUnitRow[] {
  checkType(t, 'semantic_unit');
  const hashId = t.utf8('hash_id');
  const hrid = t.int('human_readable_id');
  const context = t.utf8('context');
  const textHashId = t.utf8('text_hash_id');
  const textHashIds = t.utf8List('text_hash_ids');
  const weight = t.int('weight');
  const embedding = t.embedding('embedding');
  const generation = t.int('generation');
  const updated = t.int('updated_generation');
  return hashId.map((_, i) => ({
    hashId: hashId[i]!,
    humanReadableId: hrid[i]!,
    context: context[i]!,
    textHashId: textHashId[i]!,
    textHashIds: textHashIds[i]!,
    weight: weight[i]!,
    embedding: embedding[i]!,
    generation: generation[i]!,
    updatedGeneration: updated[i]!,
  }));
}

// ----------------------------------------------------------------------------- entities

export function entitiesToTable(rows: Iterable<EntityRow>): Table {
  const r = [...rows].sort((a, b) => a.humanReadableId - b.humanReadableId);
  return table(r.length, [
    utf8Column(
      'hash_id',
      r.map((x) => x.hashId),
    ),
    int64Column(
      'human_readable_id',
      r.map((x) => x.humanReadableId),
    ),
    constant('type', 'entity', r.length),
    utf8Column(
      'context',
      r.map((x) => x.context),
    ),
    utf8Column(
      'text_hash_id',
      r.map((x) => x.textHashId),
    ),
    int64Column(
      'weight',
      r.map((x) => x.weight),
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
    int32Column(
      'updated_generation',
      r.map((x) => x.updatedGeneration),
    ),
  ]);
}

export const ENTITY_COLUMNS: ColumnRequest[] = [
  { name: 'hash_id', kind: 'utf8' },
  { name: 'human_readable_id', kind: 'int64' },
  { name: 'type', kind: 'utf8' },
  { name: 'context', kind: 'utf8' },
  { name: 'text_hash_id', kind: 'utf8' },
  { name: 'weight', kind: 'int64' },
  { name: 'generation', kind: 'int32' },
  { name: 'updated_generation', kind: 'int32' },
];

export function entitiesFromTable(t: TableReader): EntityRow[] {
  checkType(t, 'entity');
  const hashId = t.utf8('hash_id');
  const hrid = t.int('human_readable_id');
  const context = t.utf8('context');
  const textHashId = t.utf8('text_hash_id');
  const weight = t.int('weight');
  const generation = t.int('generation');
  const updated = t.int('updated_generation');
  return hashId.map((_, i) => ({
    hashId: hashId[i]!,
    humanReadableId: hrid[i]!,
    context: context[i]!,
    textHashId: textHashId[i]!,
    weight: weight[i]!,
    generation: generation[i]!,
    updatedGeneration: updated[i]!,
  }));
}

// ----------------------------------------------------------------------------- relationships

export function relationshipsToTable(rows: Iterable<RelationshipRow>): Table {
  const r = [...rows].sort((a, b) => a.humanReadableId - b.humanReadableId);
  return table(r.length, [
    utf8Column(
      'hash_id',
      r.map((x) => x.hashId),
    ),
    int64Column(
      'human_readable_id',
      r.map((x) => x.humanReadableId),
    ),
    constant('type', 'relationship', r.length),
    utf8ListColumn(
      'unique_relationship',
      r.map((x) => x.uniqueRelationship),
    ),
    utf8ListColumn(
      'relations',
      r.map((x) => x.relations),
    ),
    utf8Column(
      'context',
      r.map((x) => x.relations.join('; ')),
    ),
    utf8Column(
      'text_hash_id',
      r.map((x) => x.textHashId),
    ),
    int64Column(
      'weight',
      r.map((x) => x.weight),
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
    int32Column(
      'updated_generation',
      r.map((x) => x.updatedGeneration),
    ),
  ]);
}

export const RELATIONSHIP_COLUMNS: ColumnRequest[] = [
  { name: 'hash_id', kind: 'utf8' },
  { name: 'human_readable_id', kind: 'int64' },
  { name: 'type', kind: 'utf8' },
  { name: 'unique_relationship', kind: 'utf8_list' },
  { name: 'relations', kind: 'utf8_list' },
  { name: 'text_hash_id', kind: 'utf8' },
  { name: 'weight', kind: 'int64' },
  { name: 'generation', kind: 'int32' },
  { name: 'updated_generation', kind: 'int32' },
];

export function relationshipsFromTable(t: TableReader): RelationshipRow[] {
  checkType(t, 'relationship');
  const hashId = t.utf8('hash_id');
  const hrid = t.int('human_readable_id');
  const pair = t.utf8List('unique_relationship');
  const relations = t.utf8List('relations');
  const textHashId = t.utf8('text_hash_id');
  const weight = t.int('weight');
  const generation = t.int('generation');
  const updated = t.int('updated_generation');
  return hashId.map((_, i) => {
    const ends = pair[i]!;
    if (ends.length !== 2) {
      throw new IndexFileError(
        'index_damaged',
        `${t.label}: row ${i}: unique_relationship must hold two entity ids, got ${ends.length}`,
      );
    }
    return {
      hashId: hashId[i]!,
      humanReadableId: hrid[i]!,
      uniqueRelationship: [ends[0]!, ends[1]!],
      relations: relations[i]!,
      textHashId: textHashId[i]!,
      weight: weight[i]!,
      generation: generation[i]!,
      updatedGeneration: updated[i]!,
    };
  });
}

// ----------------------------------------------------------------------------- attributes

export function attributesToTable(rows: Iterable<AttributeRow>, dim: number): Table {
  const r = [...rows].sort((a, b) => a.humanReadableId - b.humanReadableId);
  return table(r.length, [
    utf8Column(
      'hash_id',
      r.map((x) => x.hashId),
    ),
    int64Column(
      'human_readable_id',
      r.map((x) => x.humanReadableId),
    ),
    constant('type', 'attribute', r.length),
    utf8Column(
      'node',
      r.map((x) => x.node),
    ),
    utf8Column(
      'context',
      r.map((x) => x.context),
    ),
    int64Column(
      'weight',
      r.map((x) => x.weight),
    ),
    embeddingColumn(
      'embedding',
      r.map((x) => x.embedding),
      dim,
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
    int32Column(
      'updated_generation',
      r.map((x) => x.updatedGeneration),
    ),
  ]);
}

export function attributeColumns(dim: number): ColumnRequest[] {
  return [
    { name: 'hash_id', kind: 'utf8' },
    { name: 'human_readable_id', kind: 'int64' },
    { name: 'type', kind: 'utf8' },
    { name: 'node', kind: 'utf8' },
    { name: 'context', kind: 'utf8' },
    { name: 'weight', kind: 'int64' },
    { name: 'embedding', kind: 'embedding', dim },
    { name: 'generation', kind: 'int32' },
    { name: 'updated_generation', kind: 'int32' },
  ];
}

export function attributesFromTable(t: TableReader): AttributeRow[] {
  checkType(t, 'attribute');
  const hashId = t.utf8('hash_id');
  const hrid = t.int('human_readable_id');
  const node = t.utf8('node');
  const context = t.utf8('context');
  const weight = t.int('weight');
  const embedding = t.embedding('embedding');
  const generation = t.int('generation');
  const updated = t.int('updated_generation');
  return hashId.map((_, i) => ({
    hashId: hashId[i]!,
    humanReadableId: hrid[i]!,
    node: node[i]!,
    context: context[i]!,
    weight: weight[i]!,
    embedding: embedding[i]!,
    generation: generation[i]!,
    updatedGeneration: updated[i]!,
  }));
}

// ----------------------------------------------------------------------------- high-level elements

export function elementsToTable(rows: Iterable<HighLevelElementRow>, dim: number): Table {
  const r = [...rows].sort((a, b) => a.humanReadableId - b.humanReadableId);
  return table(r.length, [
    utf8Column(
      'hash_id',
      r.map((x) => x.hashId),
    ),
    int64Column(
      'human_readable_id',
      r.map((x) => x.humanReadableId),
    ),
    constant('type', 'high_level_element', r.length),
    utf8Column(
      'context',
      r.map((x) => x.context),
    ),
    utf8Column(
      'title_hash_id',
      r.map((x) => x.titleHashId),
    ),
    int64Column(
      'community_id',
      r.map((x) => x.communityId),
    ),
    utf8ListColumn(
      'related_nodes',
      r.map((x) => x.relatedNodes),
    ),
    int64Column(
      'weight',
      r.map((x) => x.weight),
    ),
    embeddingColumn(
      'embedding',
      r.map((x) => x.embedding),
      dim,
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
    int32Column(
      'updated_generation',
      r.map((x) => x.updatedGeneration),
    ),
  ]);
}

export function elementColumns(dim: number): ColumnRequest[] {
  return [
    { name: 'hash_id', kind: 'utf8' },
    { name: 'human_readable_id', kind: 'int64' },
    { name: 'type', kind: 'utf8' },
    { name: 'context', kind: 'utf8' },
    { name: 'title_hash_id', kind: 'utf8' },
    { name: 'community_id', kind: 'int64' },
    { name: 'related_nodes', kind: 'utf8_list' },
    { name: 'weight', kind: 'int64' },
    { name: 'embedding', kind: 'embedding', dim },
    { name: 'generation', kind: 'int32' },
    { name: 'updated_generation', kind: 'int32' },
  ];
}

export function elementsFromTable(t: TableReader): HighLevelElementRow[] {
  checkType(t, 'high_level_element');
  const hashId = t.utf8('hash_id');
  const hrid = t.int('human_readable_id');
  const context = t.utf8('context');
  const titleHashId = t.utf8('title_hash_id');
  const communityId = t.int('community_id');
  const related = t.utf8List('related_nodes');
  const weight = t.int('weight');
  const embedding = t.embedding('embedding');
  const generation = t.int('generation');
  const updated = t.int('updated_generation');
  return hashId.map((_, i) => ({
    hashId: hashId[i]!,
    humanReadableId: hrid[i]!,
    context: context[i]!,
    titleHashId: titleHashId[i]!,
    communityId: communityId[i]!,
    relatedNodes: related[i]!,
    weight: weight[i]!,
    embedding: embedding[i]!,
    generation: generation[i]!,
    updatedGeneration: updated[i]!,
  }));
}

export function titlesToTable(rows: Iterable<TitleRow>): Table {
  const r = [...rows].sort((a, b) => a.humanReadableId - b.humanReadableId);
  return table(r.length, [
    utf8Column(
      'hash_id',
      r.map((x) => x.hashId),
    ),
    int64Column(
      'human_readable_id',
      r.map((x) => x.humanReadableId),
    ),
    constant('type', 'high_level_element_title', r.length),
    utf8Column(
      'context',
      r.map((x) => x.context),
    ),
    utf8Column(
      'related_node',
      r.map((x) => x.relatedNode),
    ),
    int64Column(
      'weight',
      r.map((x) => x.weight),
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
  ]);
}

export const TITLE_COLUMNS: ColumnRequest[] = [
  { name: 'hash_id', kind: 'utf8' },
  { name: 'human_readable_id', kind: 'int64' },
  { name: 'type', kind: 'utf8' },
  { name: 'context', kind: 'utf8' },
  { name: 'related_node', kind: 'utf8' },
  { name: 'weight', kind: 'int64' },
  { name: 'generation', kind: 'int32' },
];

export function titlesFromTable(t: TableReader): TitleRow[] {
  checkType(t, 'high_level_element_title');
  const hashId = t.utf8('hash_id');
  const hrid = t.int('human_readable_id');
  const context = t.utf8('context');
  const related = t.utf8('related_node');
  const weight = t.int('weight');
  const generation = t.int('generation');
  return hashId.map((_, i) => ({
    hashId: hashId[i]!,
    humanReadableId: hrid[i]!,
    context: context[i]!,
    relatedNode: related[i]!,
    weight: weight[i]!,
    generation: generation[i]!,
  }));
}

// ----------------------------------------------------------------------------- graph

export function graphNodesToTable(nodes: Iterable<[string, GraphNode]>): Table {
  const r = [...nodes].sort((a, b) => byString(a[0], b[0]));
  return table(r.length, [
    utf8Column(
      'id',
      r.map((x) => x[0]),
    ),
    utf8Column(
      'type',
      r.map((x) => x[1].type),
    ),
    int64Column(
      'weight',
      r.map((x) => x[1].weight),
    ),
    int32Column(
      'generation',
      r.map((x) => x[1].generation),
    ),
    int32Column(
      'updated_generation',
      r.map((x) => x[1].updatedGeneration),
    ),
  ]);
}

export const GRAPH_NODE_COLUMNS: ColumnRequest[] = [
  { name: 'id', kind: 'utf8' },
  { name: 'type', kind: 'utf8' },
  { name: 'weight', kind: 'int64' },
  { name: 'generation', kind: 'int32' },
  { name: 'updated_generation', kind: 'int32' },
];

const NODE_TYPE_SET: ReadonlySet<string> = new Set(NODE_TYPES);

export function graphNodesFromTable(t: TableReader): Map<string, GraphNode> {
  const id = t.utf8('id');
  const type = t.utf8('type');
  const weight = t.int('weight');
  const generation = t.int('generation');
  const updated = t.int('updated_generation');
  const out = new Map<string, GraphNode>();
  id.forEach((nodeId, i) => {
    const ty = type[i]!;
    if (!NODE_TYPE_SET.has(ty)) {
      throw new IndexFileError(
        'index_damaged',
        `${t.label}: row ${i} has unknown node type ${JSON.stringify(ty)}`,
      );
    }
    out.set(nodeId, {
      type: ty as NodeType,
      weight: weight[i]!,
      generation: generation[i]!,
      updatedGeneration: updated[i]!,
    });
  });
  return out;
}

function sortEdges<T extends { source: string; target: string }>(edges: Iterable<T>): T[] {
  return [...edges].sort((a, b) => byString(a.source, b.source) || byString(a.target, b.target));
}

export function graphEdgesToTable(edges: Iterable<GraphEdge>): Table {
  const r = sortEdges(edges);
  return table(r.length, [
    utf8Column(
      'source',
      r.map((x) => x.source),
    ),
    utf8Column(
      'target',
      r.map((x) => x.target),
    ),
    int64Column(
      'weight',
      r.map((x) => x.weight),
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
  ]);
}

export const GRAPH_EDGE_COLUMNS: ColumnRequest[] = [
  { name: 'source', kind: 'utf8' },
  { name: 'target', kind: 'utf8' },
  { name: 'weight', kind: 'int64' },
  { name: 'generation', kind: 'int32' },
];

export function graphEdgesFromTable(t: TableReader): Map<string, GraphEdge> {
  const source = t.utf8('source');
  const target = t.utf8('target');
  const weight = t.int('weight');
  const generation = t.int('generation');
  const out = new Map<string, GraphEdge>();
  source.forEach((s, i) => {
    const e: GraphEdge = { source: s, target: target[i]!, weight: weight[i]!, generation: generation[i]! };
    out.set(edgeKey(e.source, e.target), e);
  });
  return out;
}

// ----------------------------------------------------------------------------- vector index

export interface SimilarityEdge {
  source: string;
  target: string;
}

export function hnswGraphToTable(edges: Iterable<SimilarityEdge>): Table {
  const r = sortEdges(edges);
  return table(r.length, [
    utf8Column(
      'source',
      r.map((x) => x.source),
    ),
    utf8Column(
      'target',
      r.map((x) => x.target),
    ),
  ]);
}

export const HNSW_GRAPH_COLUMNS: ColumnRequest[] = [
  { name: 'source', kind: 'utf8' },
  { name: 'target', kind: 'utf8' },
];

export function hnswGraphFromTable(t: TableReader): SimilarityEdge[] {
  const source = t.utf8('source');
  const target = t.utf8('target');
  return source.map((s, i) => ({ source: s, target: target[i]! }));
}

/** One row of id_map.parquet: an HNSW label and the node it holds. */
export interface IdMapRow {
  label: number;
  node: string;
  type: NodeType;
  retired: boolean;
  generation: number;
}

export function idMapToTable(rows: Iterable<IdMapRow>): Table {
  const r = [...rows].sort((a, b) => a.label - b.label);
  return table(r.length, [
    int64Column(
      'id',
      r.map((x) => x.label),
    ),
    utf8Column(
      'node',
      r.map((x) => x.node),
    ),
    utf8Column(
      'type',
      r.map((x) => x.type),
    ),
    booleanColumn(
      'retired',
      r.map((x) => x.retired),
    ),
    int32Column(
      'generation',
      r.map((x) => x.generation),
    ),
  ]);
}

export const ID_MAP_COLUMNS: ColumnRequest[] = [
  { name: 'id', kind: 'int64' },
  { name: 'node', kind: 'utf8' },
  { name: 'type', kind: 'utf8' },
  { name: 'retired', kind: 'boolean' },
  { name: 'generation', kind: 'int32' },
];

export function idMapFromTable(t: TableReader): IdMapRow[] {
  const label = t.int('id');
  const node = t.utf8('node');
  const type = t.utf8('type');
  const retired = t.boolean('retired');
  const generation = t.int('generation');
  return label.map((l, i) => {
    const ty = type[i]!;
    if (!NODE_TYPE_SET.has(ty)) {
      throw new IndexFileError(
        'index_damaged',
        `${t.label}: row ${i} has unknown node type ${JSON.stringify(ty)}`,
      );
    }
    if (l !== i) {
      throw new IndexFileError(
        'index_damaged',
        `${t.label}: row ${i} has label ${l}; labels must run 0, 1, 2, …`,
      );
    }
    return {
      label: l,
      node: node[i]!,
      type: ty as NodeType,
      retired: retired[i]!,
      generation: generation[i]!,
    };
  });
}
