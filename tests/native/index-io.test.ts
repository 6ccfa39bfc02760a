/**
 * ts/index-io: every table of docs/method.md §5 written through the native store and read back
 * unchanged (rows, order, nulls, vectors), and text_decomposition.jsonl round trips.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexFileError } from '../../ts/errors.js';
import type { ColumnRequest, Table } from '../../ts/index-io/columns.js';
import { TableReader } from '../../ts/index-io/columns.js';
import {
  parseDecompositions,
  readDecompositions,
  serializeDecompositions,
} from '../../ts/index-io/decomposition.js';
import { readTableFile, writeTableFile } from '../../ts/index-io/parquet.js';
import * as T from '../../ts/index-io/tables.js';
import type { DecompositionRecord } from '../../ts/model/types.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'noderag-index-io-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const DIM = 3;
const v = (...x: number[]) => Float32Array.from(x);

async function roundTrip<T>(
  name: string,
  table: Table,
  columns: ColumnRequest[],
  parse: (r: TableReader) => T,
): Promise<T> {
  const path = join(dir, `${name}.parquet`);
  await writeTableFile(path, table);
  return parse(new TableReader(name, await readTableFile(path, columns)));
}

describe('index-io tables', () => {
  it('documents and text (nulls in the embedding column, rows sorted by number)', async () => {
    const docs = [
      {
        docId: 2,
        docHashId: 'h2',
        path: 'b/é.md',
        format: 'md',
        textIds: [],
        textHashIds: [],
        charCount: 0,
        generation: 2,
      },
      {
        docId: 1,
        docHashId: 'h1',
        path: 'a.txt',
        format: 'txt',
        textIds: [1, 2],
        textHashIds: ['t1', 't2'],
        charCount: 12,
        generation: 1,
      },
    ];
    expect(
      await roundTrip('documents', T.documentsToTable(docs), T.DOCUMENT_COLUMNS, T.documentsFromTable),
    ).toEqual([docs[1], docs[0]]);
    const texts = [
      {
        textId: 1,
        hashId: 't1',
        context: 'Hello 世界',
        docId: 1,
        docHashId: 'h1',
        chunkIndex: 0,
        tokenCount: 3,
        embedding: v(1, 2, 3),
        generation: 1,
      },
      {
        textId: 2,
        hashId: 't2',
        context: 'x',
        docId: 1,
        docHashId: 'h1',
        chunkIndex: 1,
        tokenCount: 1,
        embedding: null,
        generation: 1,
      },
    ];
    expect(await roundTrip('text', T.textToTable(texts, DIM), T.textColumns(DIM), T.textFromTable)).toEqual(
      texts,
    );
  });

  it('units, entities, relationships, attributes, elements, titles', async () => {
    const units = [
      {
        hashId: 'u',
        humanReadableId: 1,
        context: 'A unit.',
        textHashId: 't1',
        textHashIds: ['t1', 't2'],
        weight: 2,
        embedding: null,
        generation: 1,
        updatedGeneration: 2,
      },
    ];
    expect(await roundTrip('u', T.unitsToTable(units, DIM), T.unitColumns(DIM), T.unitsFromTable)).toEqual(
      units,
    );
    const entities = [
      {
        hashId: 'e',
        humanReadableId: 1,
        context: 'PARIS',
        textHashId: 't1',
        weight: 3,
        generation: 1,
        updatedGeneration: 1,
      },
    ];
    expect(await roundTrip('e', T.entitiesToTable(entities), T.ENTITY_COLUMNS, T.entitiesFromTable)).toEqual(
      entities,
    );
    const rels = [
      {
        hashId: 'r',
        humanReadableId: 1,
        uniqueRelationship: ['a', 'b'] as [string, string],
        relations: ['A x B', 'B y A'],
        textHashId: 't1',
        weight: 2,
        generation: 1,
        updatedGeneration: 1,
      },
    ];
    expect(
      await roundTrip('r', T.relationshipsToTable(rels), T.RELATIONSHIP_COLUMNS, T.relationshipsFromTable),
    ).toEqual(rels);
    const attrs = [
      {
        hashId: 'a',
        humanReadableId: 1,
        node: 'e',
        context: 'Profile',
        weight: 3,
        embedding: v(0, 1, 0),
        generation: 1,
        updatedGeneration: 1,
      },
    ];
    expect(
      await roundTrip('a', T.attributesToTable(attrs, DIM), T.attributeColumns(DIM), T.attributesFromTable),
    ).toEqual(attrs);
    const elements = [
      {
        hashId: 'h',
        humanReadableId: 1,
        context: 'Theme',
        titleHashId: 'ht',
        communityId: 4,
        relatedNodes: ['u', 'a'],
        weight: 1,
        embedding: v(1, 0, 0),
        generation: 1,
        updatedGeneration: 1,
      },
    ];
    expect(
      await roundTrip('h', T.elementsToTable(elements, DIM), T.elementColumns(DIM), T.elementsFromTable),
    ).toEqual(elements);
    const titles = [
      { hashId: 'ht', humanReadableId: 1, context: 'Title', relatedNode: 'h', weight: 1, generation: 1 },
    ];
    expect(await roundTrip('ht', T.titlesToTable(titles), T.TITLE_COLUMNS, T.titlesFromTable)).toEqual(
      titles,
    );
  });

  it('graph tables sorted by id and by (source, target); id_map and similarity edges', async () => {
    const nodes: [
      string,
      { type: 'entity' | 'text'; weight: number; generation: number; updatedGeneration: number },
    ][] = [
      ['b', { type: 'entity', weight: 2, generation: 1, updatedGeneration: 2 }],
      ['a', { type: 'text', weight: 1, generation: 1, updatedGeneration: 1 }],
    ];
    const readNodes = await roundTrip(
      'n',
      T.graphNodesToTable(nodes),
      T.GRAPH_NODE_COLUMNS,
      T.graphNodesFromTable,
    );
    expect([...readNodes.keys()]).toEqual(['a', 'b']);
    const edges = [
      { source: 'b', target: 'c', weight: 1, generation: 1 },
      { source: 'a', target: 'c', weight: 4, generation: 2 },
    ];
    const readEdges = await roundTrip(
      'g',
      T.graphEdgesToTable(edges),
      T.GRAPH_EDGE_COLUMNS,
      T.graphEdgesFromTable,
    );
    expect([...readEdges.values()]).toEqual([edges[1], edges[0]]);
    const idMap = [
      { label: 0, node: 'a', type: 'text' as const, retired: true, generation: 1 },
      { label: 1, node: 'a', type: 'text' as const, retired: false, generation: 2 },
    ];
    expect(await roundTrip('m', T.idMapToTable(idMap), T.ID_MAP_COLUMNS, T.idMapFromTable)).toEqual(idMap);
    const sim = [{ source: 'a', target: 'b' }];
    expect(await roundTrip('s', T.hnswGraphToTable(sim), T.HNSW_GRAPH_COLUMNS, T.hnswGraphFromTable)).toEqual(
      sim,
    );
  });

  it('rejects a vector of the wrong length and a table of the wrong type, naming the file', async () => {
    expect(() =>
      T.textToTable(
        [
          {
            textId: 1,
            hashId: 't',
            context: 'c',
            docId: 1,
            docHashId: 'h',
            chunkIndex: 0,
            tokenCount: 1,
            embedding: v(1),
            generation: 1,
          },
        ],
        DIM,
      ),
    ).toThrow(/row 0 has a vector of length 1, expected config.dim = 3/);
    const entities = [
      {
        hashId: 'e',
        humanReadableId: 1,
        context: 'X',
        textHashId: 't',
        weight: 1,
        generation: 1,
        updatedGeneration: 1,
      },
    ];
    await expect(
      roundTrip('wrong', T.entitiesToTable(entities), T.ENTITY_COLUMNS, T.unitsFromTable),
    ).rejects.toThrow(/wrong: row 0 has type "entity", expected semantic_unit/);
  });
});

describe('text_decomposition.jsonl', () => {
  const record: DecompositionRecord = {
    text_hash_id: 't1',
    text_id: 1,
    generation: 1,
    status: 'ok',
    response: {
      Output: [{ semantic_unit: '居里夫人在巴黎工作。', entities: ['居里夫人'], relationships: [] }],
    },
    units: [
      {
        semantic_unit: '居里夫人在巴黎工作。',
        entities: ['居里夫人', '巴黎'],
        relationships: [{ source: '居里夫人', relation: '工作于', target: '巴黎' }],
      },
    ],
    dropped: [{ input: 'x', reason: 'empty relationship string' }],
    error: null,
  };

  it('round trips in text_id order with non-ASCII as is', async () => {
    const second = {
      ...record,
      text_hash_id: 't0',
      text_id: 0,
      status: 'failed' as const,
      response: null,
      units: [],
      dropped: [],
      error: 'HTTP 500',
    };
    const text = serializeDecompositions([record, second]);
    expect(text).toContain('居里夫人');
    expect(text.split('\n')[0]).toContain('"text_id":0');
    const path = join(dir, 'd.jsonl');
    await writeFile(path, text);
    expect(await readDecompositions(path, 'd.jsonl')).toEqual([second, record]);
    expect(await readDecompositions(join(dir, 'missing.jsonl'), 'missing')).toEqual([]);
  });

  it('names the damaged line', () => {
    const text = `${serializeDecompositions([record])}{"text_hash_id": 3}\n`;
    expect(() => parseDecompositions(text, 'cache/text_decomposition.jsonl')).toThrow(IndexFileError);
    expect(() => parseDecompositions(text, 'cache/text_decomposition.jsonl')).toThrow(
      /text_decomposition.jsonl, line 2/,
    );
  });
});
