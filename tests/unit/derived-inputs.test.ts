/**
 * cache/attribute_inputs.json, community_inputs.json and retired_vectors.json (ts/index-io):
 * round trip and damage reports.
 */
import { describe, expect, it } from 'vitest';
import { IndexFileError } from '../../ts/errors.js';
import {
  emptyAttributeInputs,
  parseAttributeInputs,
  serializeAttributeInputs,
} from '../../ts/index-io/attribute-inputs.js';
import {
  COMMUNITY_INPUTS_FILE,
  parseCommunityInputs,
  type RecordedCommunity,
  serializeCommunityInputs,
} from '../../ts/index-io/community-inputs.js';
import {
  parseRetiredVectors,
  RETIRED_VECTORS_FILE,
  serializeRetiredVectors,
} from '../../ts/index-io/retired-vectors.js';

const LABEL = 'cache/attribute_inputs.json';

describe('attribute_inputs.json', () => {
  it('round-trips inputs and retired attributes, vectors bit for bit', () => {
    const a = emptyAttributeInputs();
    a.inputs.set('attr-b', 'h2');
    a.inputs.set('attr-a', 'h1');
    const vector = new Float32Array([0.1, -2.5, Number.MIN_VALUE, 3e38]);
    // A view into a larger buffer, as rows read from parquet are.
    const backing = new Float32Array(8);
    backing.set(vector, 2);
    a.retired.set('attr-c', {
      input: 'h3',
      humanReadableId: 7,
      context: 'Ada — a name with "quotes"',
      embedding: backing.subarray(2, 6),
      generation: 1,
      updatedGeneration: 3,
    });
    a.retired.set('attr-d', {
      input: 'h4',
      humanReadableId: 8,
      context: 'x',
      embedding: null,
      generation: 2,
      updatedGeneration: 2,
    });
    const text = serializeAttributeInputs(a);
    expect(text.indexOf('attr-a')).toBeLessThan(text.indexOf('attr-b'));
    const back = parseAttributeInputs(text, LABEL);
    expect([...back.inputs]).toEqual([
      ['attr-a', 'h1'],
      ['attr-b', 'h2'],
    ]);
    const c = back.retired.get('attr-c')!;
    expect(c.context).toBe('Ada — a name with "quotes"');
    expect(c.humanReadableId).toBe(7);
    expect(c.updatedGeneration).toBe(3);
    expect([...c.embedding!]).toEqual([...vector]);
    expect(back.retired.get('attr-d')!.embedding).toBeNull();
    expect(serializeAttributeInputs(back)).toBe(text);
  });

  it('round-trips the inputs of entities judged not important; a file written before them reads as none', () => {
    const a = emptyAttributeInputs();
    a.unimportant.set('entity-b', 'h2');
    a.unimportant.set('entity-a', 'h1');
    const back = parseAttributeInputs(serializeAttributeInputs(a), LABEL);
    expect([...back.unimportant]).toEqual([
      ['entity-a', 'h1'],
      ['entity-b', 'h2'],
    ]);
    const older = parseAttributeInputs('{"version":1,"inputs":{"x":"h"},"retired":{}}', LABEL);
    expect(older.unimportant.size).toBe(0);
    expect([...older.inputs]).toEqual([['x', 'h']]);
    // Nor does it name the chat model its inputs were hashed with.
    expect(older.model).toBeUndefined();
  });

  it('round-trips the chat model the inputs were hashed with', () => {
    const a = emptyAttributeInputs();
    a.model = 'm'.repeat(64);
    const text = serializeAttributeInputs(a);
    expect(parseAttributeInputs(text, LABEL).model).toBe(a.model);
    expect(serializeAttributeInputs(parseAttributeInputs(text, LABEL))).toBe(text);
  });

  it('names the file and what is wrong when it is damaged', () => {
    const bad = [
      ['{', /not valid JSON/],
      ['[]', /expected \{ "version": 1, "inputs"/],
      ['{"version":1,"inputs":{"a":3},"retired":{}}', /inputs\.a must be a string/],
      ['{"version":1,"inputs":{},"retired":{},"unimportant":{"e":1}}', /unimportant\.e must be a string/],
      ['{"version":1,"inputs":{},"retired":{},"unimportant":[]}', /"unimportant": \{…\}/],
      ['{"version":1,"inputs":{},"retired":{},"model":7}', /"unimportant": \{…\}/],
      ['{"version":1,"inputs":{},"retired":{"a":{"input":"h"}}}', /retired\.a must have input/],
      [
        '{"version":1,"inputs":{},"retired":{"a":{"input":"h","human_readable_id":1,"context":"c","embedding":"AAA=","generation":1,"updated_generation":1}}}',
        /embedding of retired a is not a list of f32/,
      ],
    ] as const;
    for (const [text, message] of bad) {
      let error: unknown;
      try {
        parseAttributeInputs(text, LABEL);
      } catch (e) {
        error = e;
      }
      expect(error, text).toBeInstanceOf(IndexFileError);
      expect((error as Error).message).toContain(LABEL);
      expect((error as Error).message).toMatch(message);
    }
  });
});

describe('community_inputs.json', () => {
  it('round-trips the recorded replies and members and names what is wrong in a damaged file', () => {
    const m = new Map<string, RecordedCommunity>([
      ['h2', { elements: [['Title', 'A description.']], members: ['u2', 'a1'] }],
      ['h1', { elements: [], members: [] }],
    ]);
    const text = serializeCommunityInputs(m);
    expect(text.indexOf('"h1"')).toBeLessThan(text.indexOf('"h2"'));
    expect([...parseCommunityInputs(text, COMMUNITY_INPUTS_FILE)]).toEqual([...m].sort());
    // A version 1 file (elements only) reads with no members.
    const older = parseCommunityInputs(
      '{"version":1,"communities":{"h":[["T","D."]]}}',
      COMMUNITY_INPUTS_FILE,
    );
    expect(older.get('h')).toEqual({ elements: [['T', 'D.']], members: [] });
    for (const [bad, message] of [
      ['nope', /not valid JSON/],
      ['{"version":3,"communities":{}}', /expected \{ "version": 2, "communities"/],
      [
        '{"version":1,"communities":{"h":[["only title"]]}}',
        /communities\.h must be a list of \[title, description\]/,
      ],
      ['{"version":2,"communities":{"h":{"elements":[]}}}', /communities\.h must be \{ "elements"/],
      [
        '{"version":2,"communities":{"h":{"elements":[],"members":[1]}}}',
        /communities\.h must be \{ "elements"/,
      ],
    ] as const) {
      expect(() => parseCommunityInputs(bad, COMMUNITY_INPUTS_FILE)).toThrow(IndexFileError);
      expect(() => parseCommunityInputs(bad, COMMUNITY_INPUTS_FILE)).toThrow(message);
      expect(() => parseCommunityInputs(bad, COMMUNITY_INPUTS_FILE)).toThrow(COMMUNITY_INPUTS_FILE);
    }
  });
});

describe('retired_vectors.json', () => {
  it('round-trips unit vectors bit for bit and names what is wrong in a damaged file', () => {
    const v = new Float32Array([1.5, -0, 1e38, 2 ** -126]);
    const m = new Map([['u1', { generation: 3, embedding: v }]]);
    const back = parseRetiredVectors(serializeRetiredVectors(m), RETIRED_VECTORS_FILE);
    expect(back.get('u1')!.generation).toBe(3);
    expect(new Uint8Array(back.get('u1')!.embedding.buffer)).toEqual(new Uint8Array(v.buffer));
    for (const [bad, message] of [
      ['{"version":1}', /expected \{ "version": 1, "units"/],
      ['{"version":1,"units":{"u":{"generation":1}}}', /units\.u must have a generation and an embedding/],
      [
        '{"version":1,"units":{"u":{"generation":1,"embedding":"AAAAAAA="}}}',
        /embedding of u is not a list of f32/,
      ],
    ] as const) {
      expect(() => parseRetiredVectors(bad, RETIRED_VECTORS_FILE)).toThrow(IndexFileError);
      expect(() => parseRetiredVectors(bad, RETIRED_VECTORS_FILE)).toThrow(message);
    }
  });
});
