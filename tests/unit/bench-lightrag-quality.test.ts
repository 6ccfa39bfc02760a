/**
 * The pieces of the quality bench's LightRAG row that need no Python (issue 20 item 2): the
 * driver's output line, a mix-mode context taken apart (as lightrag-hku 1.5.7 renders
 * PROMPTS["kg_query_context"]: JSON lines per entity, relation and chunk, `[id] path`
 * references), the token matching of noderag and naive top-k to LightRAG's tokens, the count
 * keys scaled for it, and the cache key of LightRAG's index.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  closestByTokens,
  type LightragEmbedding,
  lightragContextBlocks,
  lightragContextItems,
  lightragIndexKey,
  parseDriverOutput,
} from '../../bench/lib/lightrag.js';
import { scaledSettings } from '../../bench/lib/lightrag-row.js';
import type { SearchSettings } from '../../bench/lib/quality-sweep.js';

const line = (o: unknown) => JSON.stringify(o);
/** A context as LightRAG's kg_query_context template lays it out. */
const context = [
  '',
  'Knowledge Graph Data (Entity):',
  '',
  '```json',
  line({ entity: 'WARSAW', type: 'other', description: 'Warsaw is the capital of Poland.' }),
  line({ entity: 'MARIE CURIE', type: 'other', description: 'Marie Curie was born in Warsaw in 1867.' }),
  '```',
  '',
  'Knowledge Graph Data (Relationship):',
  '',
  '```json',
  line({ entity1: 'MARIE CURIE', entity2: 'WARSAW', description: 'born in' }),
  '```',
  '',
  "Document Chunks (Each entry has a reference_id refer to the `Reference Document List`; the optional `content_headings` field gives the chunk's heading path within its source document, e.g. `Section 1 → Subsection 1.2`):",
  '',
  '```json',
  line({ reference_id: '1', content: 'Marie Curie\n\nMarie Curie was a physicist born in Warsaw in 1867.' }),
  line({ reference_id: '2', content: 'Warsaw\n\nWarsaw is the capital of Poland. ```not a fence```' }),
  line({ reference_id: '1', content: 'A second chunk of the first file.' }),
  '```',
  '',
  'Reference Document List (Each entry starts with a [reference_id] that corresponds to entries in the Document Chunks):',
  '',
  '```',
  '[1] 0012-Marie-Curie.txt',
  '[2] 0500-Warsaw.txt',
  '```',
  '',
].join('\n');

describe("LightRAG's mix-mode context", () => {
  it('chunks come with the file their reference id names', () => {
    expect(lightragContextItems(context)).toEqual([
      {
        type: 'text',
        text: 'Marie Curie\n\nMarie Curie was a physicist born in Warsaw in 1867.',
        document: '0012-Marie-Curie.txt',
        partial: false,
      },
      {
        type: 'text',
        text: 'Warsaw\n\nWarsaw is the capital of Poland. ```not a fence```',
        document: '0500-Warsaw.txt',
        partial: false,
      },
      {
        type: 'text',
        text: 'A second chunk of the first file.',
        document: '0012-Marie-Curie.txt',
        partial: false,
      },
    ]);
  });

  it('the blocks split entities, relationships, chunks and references', () => {
    const b = lightragContextBlocks(context);
    expect(b.entities.split('\n').map((l) => (JSON.parse(l) as { entity: string }).entity)).toEqual([
      'WARSAW',
      'MARIE CURIE',
    ]);
    expect(JSON.parse(b.relationships)).toMatchObject({ entity1: 'MARIE CURIE', entity2: 'WARSAW' });
    expect(b.chunks.split('\n')).toHaveLength(3);
    expect(b.references).toBe('[1] 0012-Marie-Curie.txt\n[2] 0500-Warsaw.txt');
  });

  it('an empty context (or a chunk without reference) has no document', () => {
    expect(lightragContextItems('')).toEqual([]);
    const noRef = context.replace('[2] 0500-Warsaw.txt\n', '');
    expect(lightragContextItems(noRef).map((c) => c.document)).toEqual([
      '0012-Marie-Curie.txt',
      null,
      '0012-Marie-Curie.txt',
    ]);
  });
});

describe("the driver's output", () => {
  it('is the last PEER_JSON line, after any log output', () => {
    const out = `loading\nPEER_JSON {"a":1}\nmore\nPEER_JSON {"contexts":["x"],"empty":0}\n`;
    expect(parseDriverOutput(out)).toEqual({ contexts: ['x'], empty: 0 });
    expect(parseDriverOutput('Traceback (most recent call last):\n')).toBeNull();
  });
});

describe('matching a token count', () => {
  it('finds the knob value whose tokens come closest, looking at each value once', () => {
    const calls: number[] = [];
    const tokensAt = (v: number) => {
      calls.push(v);
      return 100 * v + (v > 50 ? 40 * v : 0);
    };
    expect(closestByTokens(1234, tokensAt, 1, 400)).toEqual({ value: 12, tokens: 1200 });
    expect(new Set(calls).size).toBe(calls.length);
    expect(calls.length).toBeLessThan(10);
    // The large (slow) values are never tried when a small one reaches the target.
    expect(Math.max(...calls)).toBe(16);
    expect(closestByTokens(1260, (v) => 100 * v, 1, 400)).toEqual({ value: 13, tokens: 1300 });
    // A tie goes to the smaller value.
    expect(closestByTokens(1250, (v) => 100 * v, 1, 400).value).toBe(12);
  });

  it('stops at the ends of the range', () => {
    expect(closestByTokens(50, (v) => 100 * v, 1, 10)).toEqual({ value: 1, tokens: 100 });
    expect(closestByTokens(5000, (v) => 100 * v, 1, 10)).toEqual({ value: 10, tokens: 1000 });
  });

  it('the count keys scale together in quarter steps, within 1..1000, the rest unchanged', () => {
    const base = {
      HNSW_results: 10,
      cross_node: 5,
      Enode: 10,
      Rnode: 5,
      Hnode: 2,
      ppr_alpha: 0.5,
      unbalance_adjust: true,
    } as unknown as SearchSettings;
    expect(scaledSettings(base, 4)).toEqual(base);
    expect(scaledSettings(base, 10)).toMatchObject({
      HNSW_results: 25,
      cross_node: 13,
      Enode: 25,
      Rnode: 13,
      Hnode: 5,
      ppr_alpha: 0.5,
    });
    expect(scaledSettings(base, 1)).toMatchObject({ Hnode: 1, cross_node: 1, HNSW_results: 3 });
    expect(scaledSettings(base, 1000).HNSW_results).toBe(1000);
  });
});

describe("the cache key of LightRAG's index", () => {
  const dir = mkdtempSync(join(tmpdir(), 'noderag-lightrag-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const input = join(dir, 'input');
  mkdirSync(input);
  const e5: LightragEmbedding = {
    base_url: 'http://127.0.0.1:18765/v1',
    model: 'multilingual-e5-small-q4',
    dim: 384,
    query_prefix: 'query: ',
    document_prefix: 'passage: ',
    max_token_size: 512,
  };

  it('changes with the files and the embedding settings, not with the server address', () => {
    writeFileSync(join(input, '0001-A.txt'), 'A\n\nFirst.\n');
    writeFileSync(join(input, '0002-B.txt'), 'B\n\nSecond.\n');
    const key = lightragIndexKey(input, e5);
    expect(key).toMatch(/^[0-9a-f]{12}$/);
    expect(lightragIndexKey(input, { ...e5, base_url: 'http://127.0.0.1:40000/v1' })).toBe(key);
    expect(lightragIndexKey(input, { ...e5, document_prefix: '' })).not.toBe(key);
    expect(lightragIndexKey(input, { ...e5, max_token_size: 8192 })).not.toBe(key);
    writeFileSync(join(input, '0002-B.txt'), 'B\n\nSecond, edited.\n');
    const edited = lightragIndexKey(input, e5);
    expect(edited).not.toBe(key);
    writeFileSync(join(input, '0003-C.txt'), '');
    expect(lightragIndexKey(input, e5)).not.toBe(edited);
  });
});
