/**
 * ts/index-io: every table of docs/method.md §5 written through the native store and read back
 * unchanged (rows, order, nulls, vectors), and text_decomposition.jsonl round trips.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexFileError, InternalError } from '../../ts/errors.js';
import { TableReader } from '../../ts/index-io/columns.js';
import {
  appendedDecompositions,
  parseDecompositions,
  readDecompositions,
  serializeDecompositions,
} from '../../ts/index-io/decomposition.js';
import { readTableFile, writeTableFile } from '../../ts/index-io/parquet.js';
import type { IndexTable } from '../../ts/index-io/table-spec.js';
import { graphNodeRows, TABLES as T } from '../../ts/index-io/tables.js';
import type { DecompositionRecord } from '../../ts/model/types.js';
import { resolveInProject } from '../../ts/project/layout.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'noderag-index-io-'));
  await mkdir(join(dir, 'cache'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const DIM = 3;
const v = (...x: number[]) => Float32Array.from(x);

/** Writes the rows to the table's file in the project `dir` and reads them back. */
async function roundTrip<R>(table: IndexTable<R>, rows: readonly R[], dim?: number): Promise<R[]> {
  await table.save(dir, rows, dim);
  return table.load(dir, dim);
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
    expect(await roundTrip(T.documents, docs)).toEqual([docs[1], docs[0]]);
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
    expect(await roundTrip(T.text, texts, DIM)).toEqual(texts);
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
    expect(await roundTrip(T.units, units, DIM)).toEqual(units);
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
    expect(await roundTrip(T.entities, entities)).toEqual(entities);
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
    expect(await roundTrip(T.relationships, rels)).toEqual(rels);
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
    expect(await roundTrip(T.attributes, attrs, DIM)).toEqual(attrs);
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
    expect(await roundTrip(T.elements, elements, DIM)).toEqual(elements);
    const titles = [
      { hashId: 'ht', humanReadableId: 1, context: 'Title', relatedNode: 'h', weight: 1, generation: 1 },
    ];
    expect(await roundTrip(T.titles, titles)).toEqual(titles);
  });

  it('graph tables sorted by id and by (source, target); id_map and similarity edges', async () => {
    const nodes: [
      string,
      { type: 'entity' | 'text'; weight: number; generation: number; updatedGeneration: number },
    ][] = [
      ['b', { type: 'entity', weight: 2, generation: 1, updatedGeneration: 2 }],
      ['a', { type: 'text', weight: 1, generation: 1, updatedGeneration: 1 }],
    ];
    const readNodes = await roundTrip(T.graphNodes, graphNodeRows(nodes));
    expect(readNodes.map((row) => row.id)).toEqual(['a', 'b']);
    expect(readNodes[1]).toEqual({ id: 'b', ...nodes[0]![1] });
    const edges = [
      { source: 'b', target: 'c', weight: 1, generation: 1 },
      { source: 'a', target: 'c', weight: 4, generation: 2 },
    ];
    expect(await roundTrip(T.graphEdges, edges)).toEqual([edges[1], edges[0]]);
    const idMap = [
      { label: 0, node: 'a', type: 'text' as const, retired: true, generation: 1 },
      { label: 1, node: 'a', type: 'text' as const, retired: false, generation: 2 },
    ];
    expect(await roundTrip(T.idMap, idMap)).toEqual(idMap);
    const sim = [{ source: 'a', target: 'b' }];
    expect(await roundTrip(T.hnswGraph, sim)).toEqual(sim);
  });

  it('rejects a vector of the wrong length and a table of the wrong type, naming the file', async () => {
    expect(() =>
      T.text.write(
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
    const path = resolveInProject(dir, T.units.file);
    await writeTableFile(path, T.entities.write(entities));
    const read = new TableReader(T.units.file, await readTableFile(path, T.entities.requests()));
    expect(() => T.units.read(read)).toThrow(
      /cache\/semantic_units.parquet: row 0 has type "entity", expected semantic_unit/,
    );
  });

  it('rejects rows a column kind cannot catch: unknown node types, labels out of sequence', async () => {
    await T.graphNodes.save(dir, [{ id: 'a', type: 'text', weight: 1, generation: 1, updatedGeneration: 1 }]);
    const path = resolveInProject(dir, T.graphNodes.file);
    const table = await readTableFile(path, T.graphNodes.requests());
    table.columns.find((c) => c.name === 'type')!.strings = ['txt'];
    expect(() => T.graphNodes.read(new TableReader(T.graphNodes.file, table))).toThrow(
      /cache\/graph_nodes.parquet: row 0 has unknown node type "txt"/,
    );
    const idMap = [{ label: 1, node: 'a', type: 'text' as const, retired: false, generation: 1 }];
    await expect(roundTrip(T.idMap, idMap)).rejects.toThrow(/row 0 has label 1; labels must run 0, 1, 2/);
  });
});

describe('table declarations', () => {
  it('name the file of CACHE_FILES and give search the columns it asks for, with their kinds', () => {
    expect(T.units.file).toBe('cache/semantic_units.parquet');
    expect(T.titles.file).toBe('cache/high_level_elements_titles.parquet');
    expect(T.graphEdges.columns(['weight'], ['source', 'target'])).toEqual([
      { name: 'weight', kind: 'int64' },
      { name: 'source', kind: 'utf8', dictionary: true },
      { name: 'target', kind: 'utf8', dictionary: true },
    ]);
    // A derived column (written for other readers, not read back by T.relationships.read) can be asked for.
    expect(T.relationships.columns(['context'])).toEqual([{ name: 'context', kind: 'utf8' }]);
    expect(T.text.requests(DIM).find((c) => c.name === 'embedding')).toEqual({
      name: 'embedding',
      kind: 'embedding',
      dim: DIM,
    });
    // @ts-expect-error: a column the table does not declare does not compile
    expect(() => T.units.columns(['text_id'])).toThrow(InternalError);
    expect(() => T.graphEdges.columns([], ['weight'])).toThrow(/weight is int64, not utf8/);
  });

  it('refuses to write vectors without config.dim', () => {
    expect(() => T.units.write([])).toThrow(
      /cache\/semantic_units.parquet: writing vectors needs config.dim/,
    );
    expect(T.entities.write([]).numRows).toBe(0);
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

  it('writes records read back as the same bytes, and a line of another shape in the written form', () => {
    const text = serializeDecompositions([record, { ...record, text_hash_id: 't2', text_id: 2 }]);
    const read = parseDecompositions(text, 'd.jsonl');
    expect(serializeDecompositions(read)).toBe(text);
    // Spaced out by hand: read, and written again as serializeDecompositions writes it.
    const spaced = JSON.stringify(JSON.parse(text.split('\n')[0]!), null, 1).replaceAll('\n', '');
    expect(serializeDecompositions(parseDecompositions(`${spaced}\n`, 'd.jsonl'))).toBe(
      serializeDecompositions([record]),
    );
  });

  it('appends the lines of records that come after all others, the bytes of a whole write', () => {
    const at = (id: number) => ({ ...record, text_hash_id: `t${id}`, text_id: id });
    const before = new Map([at(1), at(2)].map((r) => [r.text_hash_id, r]));
    const added = [at(5), at(3)];
    const lines = appendedDecompositions(before, added);
    expect(lines).not.toBeNull();
    expect(serializeDecompositions(before.values()) + lines).toBe(
      serializeDecompositions([...before.values(), ...added]),
    );
    expect(appendedDecompositions(new Map(), [at(1)])).toBe(serializeDecompositions([at(1)]));
    // Written whole: a record replacing one (a failed chunk decomposed again), or one before the last.
    expect(appendedDecompositions(before, [{ ...at(2), text_id: 7 }])).toBeNull();
    expect(appendedDecompositions(before, [at(0)])).toBeNull();
  });

  it('names the damaged line', () => {
    const text = `${serializeDecompositions([record])}{"text_hash_id": 3}\n`;
    expect(() => parseDecompositions(text, 'cache/text_decomposition.jsonl')).toThrow(IndexFileError);
    expect(() => parseDecompositions(text, 'cache/text_decomposition.jsonl')).toThrow(
      /text_decomposition.jsonl, line 2/,
    );
  });

  it('names the project in the way out when read from one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'noderag-decomp-'));
    try {
      await mkdir(join(dir, 'cache'));
      await writeFile(join(dir, 'cache', 'text_decomposition.jsonl'), '{"text_hash_id": 3}\n');
      await expect(
        readDecompositions(join(dir, 'cache', 'text_decomposition.jsonl'), 'cache/text_decomposition.jsonl'),
      ).rejects.toThrow(`\`noderag build -f ${dir} --rebuild\``);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
