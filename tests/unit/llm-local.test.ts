import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CachedProvider } from '../../ts/llm/cached-provider.js';
import { featureHashBatch, hashTokens } from '../../ts/llm/local/feature-hash.js';
import { LocalProvider, localReply } from '../../ts/llm/local/provider.js';
import { splitSentences } from '../../ts/llm/local/sentences.js';
import {
  localAnswer,
  localCommunity,
  localDecompose,
  localQuery,
  localRepair,
} from '../../ts/llm/local/tasks.js';
import { buildRequest } from '../../ts/llm/prompts/index.js';
import { SEARCH_RETRY_POLICY } from '../../ts/llm/retry.js';
import { runTask } from '../../ts/llm/run-task.js';
import { TASK_VALIDATORS } from '../../ts/llm/task-schemas.js';
import type { TaskCall } from '../../ts/llm/types.js';

const EN = `Marie Curie was born in Warsaw in 1867. In 1891 she moved to Paris to study at the University of Paris.
Curie and her husband Pierre Curie discovered polonium in 1898.

Pierre Curie died in 1906 after a street accident in Paris.`;

const ZH = '居里夫人在巴黎发现了镭。她于1903年获得诺贝尔物理学奖！1911年，她又获得了诺贝尔化学奖。';

describe('sentences', () => {
  it('cuts after . ! ? ; and CJK marks, keeps closing quotes, and respects abbreviations', () => {
    expect(
      splitSentences('He said "Go!" Then left. Dr. Smith met J. K. Rowling; e.g. at 3.5 p.m. today.'),
    ).toEqual(['He said "Go!"', 'Then left.', 'Dr. Smith met J. K. Rowling;', 'e.g. at 3.5 p.m. today.']);
    expect(splitSentences('你好。“真的吗？”他问……好')).toEqual(['你好。', '“真的吗？”', '他问……', '好']);
  });
  it('a blank line or a Markdown heading/list ends a sentence', () => {
    expect(splitSentences('# Title\n\nBody text here.\n- item one\n- item two')).toEqual([
      '# Title',
      'Body text here.',
      '- item one',
      '- item two',
    ]);
    expect(splitSentences('a line that wraps\nonto the next line.')).toEqual([
      'a line that wraps\nonto the next line.',
    ]);
  });
});

describe('local D (decomposition)', () => {
  it('one unit per sentence, verbatim, with names, years and relations between neighbours', () => {
    const { Output } = localDecompose(EN, 'English');
    expect(Output.map((u) => u.semantic_unit)).toEqual([
      'Marie Curie was born in Warsaw in 1867.',
      'In 1891 she moved to Paris to study at the University of Paris.',
      'Curie and her husband Pierre Curie discovered polonium in 1898.',
      'Pierre Curie died in 1906 after a street accident in Paris.',
    ]);
    expect(Output[0]).toEqual({
      semantic_unit: 'Marie Curie was born in Warsaw in 1867.',
      entities: ['MARIE CURIE', 'WARSAW', '1867'],
      relationships: ['MARIE CURIE, was born in, WARSAW', 'WARSAW, in, 1867'],
    });
    // "In" is dropped from "In 1891"; "University of Paris" keeps its connector.
    expect(Output[1]?.entities).toEqual(['1891', 'PARIS', 'UNIVERSITY OF PARIS']);
    expect(Output[1]?.relationships).toContain('PARIS, to study at the, UNIVERSITY OF PARIS');
    // A sentence-initial single word counts because "Curie" is a name elsewhere.
    expect(Output[2]?.entities).toEqual(['CURIE', 'PIERRE CURIE', '1898']);
    // No word, or five or more words, between two entities: RELATED TO.
    expect(Output[3]?.relationships).toEqual(['PIERRE CURIE, died in, 1906', '1906, RELATED TO, PARIS']);
  });

  it('a possessive is not part of the name: "Curie\'s" is the entity CURIE', () => {
    const { Output } = localDecompose("Marie Curie's husband Pierre Curie taught in Paris.", 'English');
    expect(Output[0]?.entities).toEqual(['MARIE CURIE', 'PIERRE CURIE', 'PARIS']);
    expect(Output[0]?.relationships).toContain('MARIE CURIE, husband, PIERRE CURIE');
    expect(localQuery('Who was Marie Curie’s husband?', 'English').elements).toEqual([
      'Marie Curie',
      'husband',
    ]);
  });

  it('a Markdown heading is not a unit', () => {
    const { Output } = localDecompose('# Marie Curie\n\nMarie Curie was born in Warsaw.', 'English');
    expect(Output.map((u) => u.semantic_unit)).toEqual(['Marie Curie was born in Warsaw.']);
  });

  it('a sentence-initial single word that is never a name elsewhere is not an entity', () => {
    const { Output } = localDecompose('Yesterday the cat slept. Nothing happened.', 'English');
    expect(Output.flatMap((u) => u.entities)).toEqual([]);
  });

  it('Chinese: segmented names, years with 年, relation words between them', () => {
    const { Output } = localDecompose(ZH, 'Chinese');
    expect(Output).toHaveLength(3);
    expect(Output[0]).toEqual({
      semantic_unit: '居里夫人在巴黎发现了镭。',
      entities: ['居里夫人', '巴黎'],
      relationships: ['居里夫人, 在, 巴黎'],
    });
    expect(Output[1]?.entities).toEqual(['1903年', '诺贝尔物理学奖']);
    expect(Output[2]?.entities).toEqual(['1911年', '诺贝尔化学奖']);
  });

  it('is deterministic and valid under the D schema', () => {
    const a = JSON.stringify(localDecompose(EN, 'English'));
    expect(JSON.stringify(localDecompose(EN, 'English'))).toBe(a);
    const v = TASK_VALIDATORS.decompose(JSON.parse(a));
    expect(v.ok).toBe(true);
  });
});

describe('local R, C, Q, ANS, A', () => {
  it('R splits at the first and the last comma', () => {
    expect(localRepair('APPLE, INC., MAKES, IPHONE')).toEqual({
      source: 'APPLE',
      relationship: 'INC., MAKES',
      target: 'IPHONE',
    });
    expect(localRepair('甲，属于，乙')).toEqual({ source: '甲', relationship: '属于', target: '乙' });
    expect(localRepair('no commas')).toEqual({ source: '', relationship: '', target: '' });
  });

  it('C: the most frequent name titles one element described by the first two members', () => {
    const r = localCommunity(
      [
        'Pierre Curie met Marie Curie in Paris. They married.',
        'Marie Curie won twice.',
        'Ignored third text.',
      ],
      'English',
    );
    expect(r.high_level_elements).toEqual([
      { title: 'Marie Curie', description: 'Pierre Curie met Marie Curie in Paris. Marie Curie won twice.' },
    ]);
    const zh = localCommunity(['居里夫人在巴黎工作。', '居里夫人获得诺贝尔奖。'], 'Chinese');
    expect(zh.high_level_elements[0]?.title).toBe('居里夫人');
  });

  it('Q: names and years first, then content words of 4+ letters, in question order', () => {
    expect(localQuery('What did Marie Curie discover in Paris in 1898?', 'English').elements).toEqual([
      'Marie Curie',
      'Paris',
      '1898',
      'discover',
    ]);
    expect(localQuery('居里夫人在哪里发现了镭？', 'Chinese').elements).toEqual(['居里夫人']);
  });

  it('ANS: the most relevant sentence of each section, or a clear "not enough"', () => {
    const context = [
      '------------attribute-------------',
      '1. Marie Curie was a physicist. She discovered polonium.',
      '',
      '------------semantic_unit-------------',
      '1. Pierre Curie died in 1906.',
      '2. Marie Curie discovered radium in 1898.',
      '',
    ].join('\n');
    expect(localAnswer(context, 'What did Marie Curie discover?', 'English')).toBe(
      'Based on the retrieved context:\n- Marie Curie was a physicist.\n- Marie Curie discovered radium in 1898.',
    );
    expect(localAnswer('', 'Anything?', 'English')).toMatch(/does not contain information/);
    // Stemmed matching, no bare headings, sections unrelated to the question left out.
    const text = [
      '------------high_level_element-------------',
      '1. The weather in Paris was mild that year.',
      '',
      '------------text-------------',
      '1. # Comet Pryce',
      '',
      'Comet Pryce is a long-period comet. It was discovered by Edith Pryce in 1925.',
      '',
    ].join('\n');
    expect(localAnswer(text, 'What did Edith Pryce discover?', 'English')).toBe(
      'Based on the retrieved context:\n- It was discovered by Edith Pryce in 1925.',
    );
    expect(localAnswer('', '什么？', 'Chinese')).toMatch(/没有/);
  });

  it('A: first sentences of the three best items, units first', async () => {
    const p = new LocalProvider({ dim: 8 });
    const out = await runTask(p, 'English', 'attribute', {
      entity: 'MARIE CURIE',
      units: ['Marie Curie was born in Warsaw. She moved.', 'Marie Curie won two Nobel prizes.'],
      relationships: ['MARIE CURIE was born in WARSAW', 'MARIE CURIE won NOBEL PRIZE'],
    });
    expect(out).toBe(
      'Marie Curie was born in Warsaw. Marie Curie won two Nobel prizes. MARIE CURIE was born in WARSAW',
    );
  });

  it('every task reply passes its validator, in both languages', () => {
    const calls: TaskCall[] = [
      { task: 'decompose', language: 'Chinese', input: { text: ZH } },
      { task: 'repair', language: 'English', input: { relationship: 'A, B, C', entities: ['A', 'C'] } },
      { task: 'community', language: 'Chinese', input: { texts: [ZH] } },
      { task: 'query', language: 'English', input: { question: 'Who?' } },
    ];
    for (const c of calls) {
      const reply = localReply(buildRequest(c));
      const validate = TASK_VALIDATORS[c.task as 'decompose'];
      expect(validate(reply).ok, c.task).toBe(true);
    }
  });
});

describe('local embeddings (feature hashing)', () => {
  it('matches the §7.7 recipe: SHA-256 bucket and sign, summed, L2-normalised', () => {
    const dim = 16;
    const expected = new Float64Array(dim);
    for (const t of ['marie', 'curie', '居', '里']) {
      const d = createHash('sha256').update(t).digest();
      const bucket = d.readUInt32LE(0) % dim;
      expected[bucket] = (expected[bucket] as number) + ((d[4] as number) & 1 ? -1 : 1);
    }
    const norm = Math.hypot(...expected);
    const got = featureHashBatch(['Marie CURIE 居里'], dim);
    expect(Array.from(got)).toEqual(Array.from(expected, (x) => Math.fround(x / norm)));
  });

  it('tokens: lower-cased words, single CJK characters', () => {
    expect(hashTokens('Hello, World! 居里夫人 x2')).toEqual(['hello', 'world', '居', '里', '夫', '人', 'x2']);
  });

  it('empty text → unit vector on bucket 0; stop words alone still count', () => {
    const [e] = [featureHashBatch([''], 4)];
    expect(Array.from(e as Float32Array)).toEqual([1, 0, 0, 0]);
    const the = featureHashBatch(['the'], 64);
    expect(Math.hypot(...the)).toBeCloseTo(1, 6);
  });

  it('stop words do not dilute content words', () => {
    const a = featureHashBatch(['Marie Curie discovered radium'], 256);
    const b = featureHashBatch(['the discovery of the radium by the Curie family'], 256);
    const c = featureHashBatch(['the weather of the city of the day'], 256);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * (y[i] as number), 0);
    expect(dot(a, b)).toBeGreaterThan(0.3);
    expect(Math.abs(dot(a, c))).toBeLessThan(0.2);
  });

  it('embed() returns one flat Float32Array of texts × dim, deterministic', async () => {
    const p = new LocalProvider({ dim: 32 });
    const r1 = await p.embed(['a', 'Paris is nice', '巴黎']);
    const r2 = await p.embed(['a', 'Paris is nice', '巴黎']);
    expect(r1.dim).toBe(32);
    expect(r1.vectors).toBeInstanceOf(Float32Array);
    expect(r1.vectors.length).toBe(96);
    expect(Buffer.from(r1.vectors.buffer).equals(Buffer.from(r2.vectors.buffer))).toBe(true);
  });

  it('honours an aborted signal', async () => {
    const p = new LocalProvider({ dim: 4 });
    const ctl = new AbortController();
    ctl.abort(new Error('stop'));
    await expect(p.embed(['x'], { signal: ctl.signal })).rejects.toThrow('stop');
  });
});

describe('local provider behind CachedProvider', () => {
  let timers = 0;
  const wrap = () =>
    new CachedProvider({
      // Counts the timers the policy would start (a per-attempt timeout is one).
      clock: {
        now: () => 0,
        sleep: () => {
          timers++;
          return new Promise(() => {});
        },
        after: () => {
          timers++;
          return () => {};
        },
      },
      adapter: new LocalProvider({ dim: 8 }),
      section: 'embedding_config',
      retry: SEARCH_RETRY_POLICY,
      timeouts: { chatMs: 1000, embedMs: 1000 },
      tokenCounter: { countTokens: (s) => s.length, truncateToTokens: (s) => s },
      expectedDim: 8,
    });

  it('answers without timers or retries, one request per call', async () => {
    const p = wrap();
    const a = await p.embed(['Marie Curie']);
    expect(Array.from(a.vectors)).toEqual(Array.from(featureHashBatch(['Marie Curie'], 8)));
    const q = await runTask(p, 'English', 'query', { question: 'Where was Marie Curie born?' });
    expect(q.elements).toContain('Marie Curie');
    expect(p.stats()).toMatchObject({ calls: 2, requests: 2, retries: 0 });
    expect(timers).toBe(0);
  });

  it("still honours the caller's abort", async () => {
    const p = wrap();
    const c = new AbortController();
    c.abort(new Error('gone'));
    await expect(p.embed(['Marie Curie'], { signal: c.signal })).rejects.toThrow();
    expect(p.stats().requests).toBe(0);
  });
});
