/**
 * The parquet tables of docs/method.md §5 as conversions between ts/model rows and column
 * buffers: one `xxxToTable` / `xxxFromTable` pair per file, both driven by the table's one
 * declaration (./table-spec.ts). Row order on disk is part of the format (sorted by number;
 * graph_nodes by id; edge tables by source then target), so the writers sort and the same
 * rows always give the same bytes.
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
import type { ColumnRequest, Table, TableReader } from './columns.js';
import { columnRequests, columnsOf, readRows, type TableSpec, writeRows } from './table-spec.js';

/** Code-point order of ASCII hash ids (plain `<` is exact for them). */
function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const byHumanReadableId = (a: { humanReadableId: number }, b: { humanReadableId: number }) =>
  a.humanReadableId - b.humanReadableId;

function byEdge(a: { source: string; target: string }, b: { source: string; target: string }): number {
  return byString(a.source, b.source) || byString(a.target, b.target);
}

// ----------------------------------------------------------------------------- documents

const d = columnsOf<DocumentRow>();
const DOCUMENTS: TableSpec<DocumentRow> = {
  order: (a, b) => a.docId - b.docId,
  columns: [
    d.int64('doc_id', 'docId'),
    d.utf8('doc_hash_id', 'docHashId'),
    d.utf8('path', 'path'),
    d.utf8('format', 'format'),
    d.int64List('text_id', 'textIds'),
    d.utf8List('text_hash_id', 'textHashIds'),
    d.int64('char_count', 'charCount'),
    d.int32('generation', 'generation'),
  ],
};

export function documentsToTable(rows: Iterable<DocumentRow>): Table {
  return writeRows(DOCUMENTS, rows);
}

export const DOCUMENT_COLUMNS: ColumnRequest[] = columnRequests(DOCUMENTS);

export function documentsFromTable(t: TableReader): DocumentRow[] {
  return readRows(DOCUMENTS, t);
}

// ----------------------------------------------------------------------------- text

const x = columnsOf<TextRow>();
const TEXT: TableSpec<TextRow> = {
  order: (a, b) => a.textId - b.textId,
  columns: [
    x.int64('text_id', 'textId'),
    x.utf8('hash_id', 'hashId'),
    x.type('text'),
    x.utf8('context', 'context'),
    x.int64('doc_id', 'docId'),
    x.utf8('doc_hash_id', 'docHashId'),
    x.int32('chunk_index', 'chunkIndex'),
    x.int32('token_count', 'tokenCount'),
    x.embedding('embedding', 'embedding'),
    x.int32('generation', 'generation'),
  ],
};

export function textToTable(rows: Iterable<TextRow>, dim: number): Table {
  return writeRows(TEXT, rows, dim);
}

export function textColumns(dim: number): ColumnRequest[] {
  return columnRequests(TEXT, dim);
}

export function textFromTable(t: TableReader): TextRow[] {
  return readRows(TEXT, t);
}

// ----------------------------------------------------------------------------- semantic units

const u = columnsOf<SemanticUnitRow>();
const UNITS: TableSpec<SemanticUnitRow> = {
  order: byHumanReadableId,
  columns: [
    u.utf8('hash_id', 'hashId'),
    u.int64('human_readable_id', 'humanReadableId'),
    u.type('semantic_unit'),
    u.utf8('context', 'context'),
    u.utf8('text_hash_id', 'textHashId'),
    u.utf8List('text_hash_ids', 'textHashIds'),
    u.int64('weight', 'weight'),
    u.embedding('embedding', 'embedding'),
    u.int32('generation', 'generation'),
    u.int32('updated_generation', 'updatedGeneration'),
  ],
};

export function unitsToTable(rows: Iterable<SemanticUnitRow>, dim: number): Table {
  return writeRows(UNITS, rows, dim);
}

export function unitColumns(dim: number): ColumnRequest[] {
  return columnRequests(UNITS, dim);
}

export function unitsFromTable(t: TableReader): SemanticUnitRow[] {
  return readRows(UNITS, t);
}

// ----------------------------------------------------------------------------- entities

const e = columnsOf<EntityRow>();
const ENTITIES: TableSpec<EntityRow> = {
  order: byHumanReadableId,
  columns: [
    e.utf8('hash_id', 'hashId'),
    e.int64('human_readable_id', 'humanReadableId'),
    e.type('entity'),
    e.utf8('context', 'context'),
    e.utf8('text_hash_id', 'textHashId'),
    e.int64('weight', 'weight'),
    e.int32('generation', 'generation'),
    e.int32('updated_generation', 'updatedGeneration'),
  ],
};

export function entitiesToTable(rows: Iterable<EntityRow>): Table {
  return writeRows(ENTITIES, rows);
}

export const ENTITY_COLUMNS: ColumnRequest[] = columnRequests(ENTITIES);

export function entitiesFromTable(t: TableReader): EntityRow[] {
  return readRows(ENTITIES, t);
}

// ----------------------------------------------------------------------------- relationships

const r = columnsOf<RelationshipRow>();
const RELATIONSHIPS: TableSpec<RelationshipRow> = {
  order: byHumanReadableId,
  columns: [
    r.utf8('hash_id', 'hashId'),
    r.int64('human_readable_id', 'humanReadableId'),
    r.type('relationship'),
    r.utf8List('unique_relationship', 'uniqueRelationship'),
    r.utf8List('relations', 'relations'),
    // Written for other readers (search, pandas); this reader rebuilds it from `relations`.
    r.derivedUtf8('context', (row) => row.relations.join('; ')),
    r.utf8('text_hash_id', 'textHashId'),
    r.int64('weight', 'weight'),
    r.int32('generation', 'generation'),
    r.int32('updated_generation', 'updatedGeneration'),
  ],
};

export function relationshipsToTable(rows: Iterable<RelationshipRow>): Table {
  return writeRows(RELATIONSHIPS, rows);
}

export const RELATIONSHIP_COLUMNS: ColumnRequest[] = columnRequests(RELATIONSHIPS);

export function relationshipsFromTable(t: TableReader): RelationshipRow[] {
  const rows = readRows(RELATIONSHIPS, t);
  rows.forEach((row, i) => {
    if (row.uniqueRelationship.length !== 2) {
      throw new IndexFileError(
        'index_damaged',
        `${t.label}: row ${i}: unique_relationship must hold two entity ids, got ${row.uniqueRelationship.length}`,
      );
    }
  });
  return rows;
}

// ----------------------------------------------------------------------------- attributes

const a = columnsOf<AttributeRow>();
const ATTRIBUTES: TableSpec<AttributeRow> = {
  order: byHumanReadableId,
  columns: [
    a.utf8('hash_id', 'hashId'),
    a.int64('human_readable_id', 'humanReadableId'),
    a.type('attribute'),
    a.utf8('node', 'node'),
    a.utf8('context', 'context'),
    a.int64('weight', 'weight'),
    a.embedding('embedding', 'embedding'),
    a.int32('generation', 'generation'),
    a.int32('updated_generation', 'updatedGeneration'),
  ],
};

export function attributesToTable(rows: Iterable<AttributeRow>, dim: number): Table {
  return writeRows(ATTRIBUTES, rows, dim);
}

export function attributeColumns(dim: number): ColumnRequest[] {
  return columnRequests(ATTRIBUTES, dim);
}

export function attributesFromTable(t: TableReader): AttributeRow[] {
  return readRows(ATTRIBUTES, t);
}

// ----------------------------------------------------------------------------- high-level elements

const h = columnsOf<HighLevelElementRow>();
const ELEMENTS: TableSpec<HighLevelElementRow> = {
  order: byHumanReadableId,
  columns: [
    h.utf8('hash_id', 'hashId'),
    h.int64('human_readable_id', 'humanReadableId'),
    h.type('high_level_element'),
    h.utf8('context', 'context'),
    h.utf8('title_hash_id', 'titleHashId'),
    h.int64('community_id', 'communityId'),
    h.utf8List('related_nodes', 'relatedNodes'),
    h.int64('weight', 'weight'),
    h.embedding('embedding', 'embedding'),
    h.int32('generation', 'generation'),
    h.int32('updated_generation', 'updatedGeneration'),
  ],
};

export function elementsToTable(rows: Iterable<HighLevelElementRow>, dim: number): Table {
  return writeRows(ELEMENTS, rows, dim);
}

export function elementColumns(dim: number): ColumnRequest[] {
  return columnRequests(ELEMENTS, dim);
}

export function elementsFromTable(t: TableReader): HighLevelElementRow[] {
  return readRows(ELEMENTS, t);
}

const ti = columnsOf<TitleRow>();
const TITLES: TableSpec<TitleRow> = {
  order: byHumanReadableId,
  columns: [
    ti.utf8('hash_id', 'hashId'),
    ti.int64('human_readable_id', 'humanReadableId'),
    ti.type('high_level_element_title'),
    ti.utf8('context', 'context'),
    ti.utf8('related_node', 'relatedNode'),
    ti.int64('weight', 'weight'),
    ti.int32('generation', 'generation'),
  ],
};

export function titlesToTable(rows: Iterable<TitleRow>): Table {
  return writeRows(TITLES, rows);
}

export const TITLE_COLUMNS: ColumnRequest[] = columnRequests(TITLES);

export function titlesFromTable(t: TableReader): TitleRow[] {
  return readRows(TITLES, t);
}

// ----------------------------------------------------------------------------- graph

const NODE_TYPE_SET: ReadonlySet<string> = new Set(NODE_TYPES);

function checkNodeType(t: TableReader, i: number, type: string): void {
  if (!NODE_TYPE_SET.has(type)) {
    throw new IndexFileError(
      'index_damaged',
      `${t.label}: row ${i} has unknown node type ${JSON.stringify(type)}`,
    );
  }
}

/** A graph_nodes.parquet row: the node's id with its attributes. */
type GraphNodeRow = GraphNode & { id: string };

const n = columnsOf<GraphNodeRow>();
const GRAPH_NODES: TableSpec<GraphNodeRow> = {
  order: (p, q) => byString(p.id, q.id),
  columns: [
    n.utf8('id', 'id'),
    n.utf8('type', 'type'),
    n.int64('weight', 'weight'),
    n.int32('generation', 'generation'),
    n.int32('updated_generation', 'updatedGeneration'),
  ],
};

export function graphNodesToTable(nodes: Iterable<[string, GraphNode]>): Table {
  return writeRows(
    GRAPH_NODES,
    Array.from(nodes, ([id, node]) => ({ ...node, id })),
  );
}

export const GRAPH_NODE_COLUMNS: ColumnRequest[] = columnRequests(GRAPH_NODES);

export function graphNodesFromTable(t: TableReader): Map<string, GraphNode> {
  const out = new Map<string, GraphNode>();
  readRows(GRAPH_NODES, t).forEach(({ id, ...node }, i) => {
    checkNodeType(t, i, node.type);
    out.set(id, node);
  });
  return out;
}

const g = columnsOf<GraphEdge>();
const GRAPH_EDGES: TableSpec<GraphEdge> = {
  order: byEdge,
  columns: [
    g.utf8('source', 'source'),
    g.utf8('target', 'target'),
    g.int64('weight', 'weight'),
    g.int32('generation', 'generation'),
  ],
};

export function graphEdgesToTable(edges: Iterable<GraphEdge>): Table {
  return writeRows(GRAPH_EDGES, edges);
}

export const GRAPH_EDGE_COLUMNS: ColumnRequest[] = columnRequests(GRAPH_EDGES);

export function graphEdgesFromTable(t: TableReader): Map<string, GraphEdge> {
  return new Map(readRows(GRAPH_EDGES, t).map((edge) => [edgeKey(edge.source, edge.target), edge]));
}

// ----------------------------------------------------------------------------- vector index

export interface SimilarityEdge {
  source: string;
  target: string;
}

const s = columnsOf<SimilarityEdge>();
const HNSW_GRAPH: TableSpec<SimilarityEdge> = {
  order: byEdge,
  columns: [s.utf8('source', 'source'), s.utf8('target', 'target')],
};

export function hnswGraphToTable(edges: Iterable<SimilarityEdge>): Table {
  return writeRows(HNSW_GRAPH, edges);
}

export const HNSW_GRAPH_COLUMNS: ColumnRequest[] = columnRequests(HNSW_GRAPH);

export function hnswGraphFromTable(t: TableReader): SimilarityEdge[] {
  return readRows(HNSW_GRAPH, t);
}

/** One row of id_map.parquet: an HNSW label and the node it holds. */
export interface IdMapRow {
  label: number;
  node: string;
  type: NodeType;
  retired: boolean;
  generation: number;
}

const m = columnsOf<IdMapRow>();
const ID_MAP: TableSpec<IdMapRow> = {
  order: (p, q) => p.label - q.label,
  columns: [
    m.int64('id', 'label'),
    m.utf8('node', 'node'),
    m.utf8('type', 'type'),
    m.boolean('retired', 'retired'),
    m.int32('generation', 'generation'),
  ],
};

export function idMapToTable(rows: Iterable<IdMapRow>): Table {
  return writeRows(ID_MAP, rows);
}

export const ID_MAP_COLUMNS: ColumnRequest[] = columnRequests(ID_MAP);

export function idMapFromTable(t: TableReader): IdMapRow[] {
  const rows = readRows(ID_MAP, t);
  rows.forEach((row, i) => {
    checkNodeType(t, i, row.type);
    if (row.label !== i) {
      throw new IndexFileError(
        'index_damaged',
        `${t.label}: row ${i} has label ${row.label}; labels must run 0, 1, 2, …`,
      );
    }
  });
  return rows;
}
