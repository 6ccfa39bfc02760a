/**
 * The parquet tables of docs/method.md §5, each declared once as an `IndexTable`
 * (./table-spec.ts) between ts/model rows and column buffers: `TABLES.units.write(rows, dim)`,
 * `TABLES.units.read(reader)`, `TABLES.units.columns([...])`. A table's name is its key in
 * CACHE_FILES. Row order on disk is part of the format (sorted by number; graph_nodes by id;
 * edge tables by source then target), so the writers sort and the same rows always give the
 * same bytes.
 */

import { IndexFileError } from '../errors.js';
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
import { columnsOf, IndexTable } from './table-spec.js';

/** Code-point order of ASCII hash ids (plain `<` is exact for them). */
function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const byHumanReadableId = (a: { humanReadableId: number }, b: { humanReadableId: number }) =>
  a.humanReadableId - b.humanReadableId;

function byEdge(a: { source: string; target: string }, b: { source: string; target: string }): number {
  return byString(a.source, b.source) || byString(a.target, b.target);
}

const NODE_TYPE_SET: ReadonlySet<string> = new Set(NODE_TYPES);

export function checkNodeType(label: string, i: number, type: string): void {
  if (!NODE_TYPE_SET.has(type)) {
    throw new IndexFileError(
      'index_damaged',
      `${label}: row ${i} has unknown node type ${JSON.stringify(type)}`,
    );
  }
}

/** A graph_nodes.parquet row: the node's id with its attributes. */
type GraphNodeRow = GraphNode & { id: string };

/**
 * The graph_nodes rows of a node map. Each row is an object literal of one shape: spreading
 * the node (`{ ...node, id }`) took 0.4–0.9 s for the 440k nodes of a 10 MB corpus, and made
 * rows the table writer then read twice as slowly (50–80 ms and 80 ms as written here).
 */
export function graphNodeRows(nodes: Iterable<[string, GraphNode]>): GraphNodeRow[] {
  return Array.from(nodes, ([id, n]) => ({
    id,
    type: n.type,
    weight: n.weight,
    generation: n.generation,
    updatedGeneration: n.updatedGeneration,
  }));
}

/** One row of hnsw_graph.parquet: a similarity edge of the vector index. */
export interface SimilarityEdge {
  source: string;
  target: string;
}

/** One row of id_map.parquet: an HNSW label and the node it holds. */
export interface IdMapRow {
  label: number;
  node: string;
  type: NodeType;
  retired: boolean;
  generation: number;
}

const d = columnsOf<DocumentRow>();
const x = columnsOf<TextRow>();
const u = columnsOf<SemanticUnitRow>();
const e = columnsOf<EntityRow>();
const r = columnsOf<RelationshipRow>();
const a = columnsOf<AttributeRow>();
const h = columnsOf<HighLevelElementRow>();
const ti = columnsOf<TitleRow>();
const n = columnsOf<GraphNodeRow>();
const g = columnsOf<GraphEdge>();
const s = columnsOf<SimilarityEdge>();
const m = columnsOf<IdMapRow>();

export const TABLES = {
  documents: new IndexTable({
    name: 'documents',
    order: (p, q) => p.docId - q.docId,
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
  }),

  text: new IndexTable({
    name: 'text',
    order: (p, q) => p.textId - q.textId,
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
  }),

  units: new IndexTable({
    name: 'units',
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
  }),

  entities: new IndexTable({
    name: 'entities',
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
  }),

  relationships: new IndexTable({
    name: 'relationships',
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
    check: (row, i, label) => {
      if (row.uniqueRelationship.length !== 2) {
        throw new IndexFileError(
          'index_damaged',
          `${label}: row ${i}: unique_relationship must hold two entity ids, got ${row.uniqueRelationship.length}`,
        );
      }
    },
  }),

  attributes: new IndexTable({
    name: 'attributes',
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
  }),

  elements: new IndexTable({
    name: 'elements',
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
  }),

  titles: new IndexTable({
    name: 'titles',
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
  }),

  graphNodes: new IndexTable({
    name: 'graphNodes',
    order: (p, q) => byString(p.id, q.id),
    columns: [
      n.utf8('id', 'id'),
      n.utf8('type', 'type'),
      n.int64('weight', 'weight'),
      n.int32('generation', 'generation'),
      n.int32('updated_generation', 'updatedGeneration'),
    ],
    check: (row, i, label) => checkNodeType(label, i, row.type),
  }),

  graphEdges: new IndexTable({
    name: 'graphEdges',
    order: byEdge,
    columns: [
      g.utf8('source', 'source'),
      g.utf8('target', 'target'),
      g.int64('weight', 'weight'),
      g.int32('generation', 'generation'),
    ],
  }),

  hnswGraph: new IndexTable({
    name: 'hnswGraph',
    order: byEdge,
    columns: [s.utf8('source', 'source'), s.utf8('target', 'target')],
  }),

  idMap: new IndexTable({
    name: 'idMap',
    order: (p, q) => p.label - q.label,
    columns: [
      m.int64('id', 'label'),
      m.utf8('node', 'node'),
      m.utf8('type', 'type'),
      m.boolean('retired', 'retired'),
      m.int32('generation', 'generation'),
    ],
    check: (row, i, label) => {
      checkNodeType(label, i, row.type);
      if (row.label !== i) {
        throw new IndexFileError(
          'index_damaged',
          `${label}: row ${i} has label ${row.label}; labels must run 0, 1, 2, …`,
        );
      }
    },
  }),
};

export type TableName = keyof typeof TABLES;
