/**
 * Sources and citations (issue 16 item 1): the answer prompt's numbered context, reading the
 * cited numbers back, grouping items by input file, and the local provider citing [n].
 */
import { describe, expect, it } from 'vitest';
import { localAnswer } from '../../ts/llm/local/tasks.js';
import { renderPrompt } from '../../ts/llm/prompts/index.js';
import type { RetrievedItem } from '../../ts/search/retrieve.js';
import {
  buildCitations,
  buildSources,
  citedContext,
  citedNumbers,
  sourceList,
  sourcesJson,
} from '../../ts/search/sources.js';

const item = (
  id: string,
  type: RetrievedItem['type'],
  text: string,
  document: string | null,
): RetrievedItem => ({
  id,
  type,
  text,
  document,
  origin: 'vector',
  score: null,
  distance: 0,
});

// In context order, as retrieve() gives them.
const ITEMS: RetrievedItem[] = [
  item('h1', 'high_level_element', 'Science in Paris.', null),
  item('u1', 'semantic_unit', 'Marie Curie discovered radium in 1898.', 'notes/curie.md'),
  item('u2', 'semantic_unit', 'Pierre Curie died in 1906.', 'b.txt'),
  item('t1', 'text', 'Marie Curie was a physicist.\n\nShe discovered polonium.', 'notes/curie.md'),
];
const CHUNK: Record<string, string> = { u1: 't1', u2: 't2', t1: 't1' };
const chunkOf = (i: RetrievedItem) => CHUNK[i.id] ?? null;

describe('sources of a context', () => {
  it('numbers the items [n] across the context, in the §6.6 layout', () => {
    expect(citedContext(ITEMS)).toBe(
      [
        '------------high_level_element-------------',
        '[1] Science in Paris.',
        '',
        '------------semantic_unit-------------',
        '[2] Marie Curie discovered radium in 1898.',
        '[3] Pierre Curie died in 1906.',
        '',
        '------------text-------------',
        '[4] Marie Curie was a physicist.\n\nShe discovered polonium.',
        '',
        '',
      ].join('\n'),
    );
    expect(citedContext([])).toBe('');
  });

  it('reads the cited numbers back: [n], [a][b], [a, b], [a-b]; out of range ignored', () => {
    expect(citedNumbers('Radium [2]. Polonium [4][2]. See [1, 3] and [9].', 4)).toEqual([1, 2, 3, 4]);
    expect(citedNumbers('Both [2-4]; and [0] or [x] or [] are not citations', 4)).toEqual([2, 3, 4]);
    expect(citedNumbers('居里夫人发现了镭[2、3]。', 4)).toEqual([2, 3]);
    expect(citedNumbers('no citations at all', 4)).toEqual([]);
  });

  it('groups items by input file with their chunks, numbers and the cited ones', () => {
    const sources = buildSources(ITEMS, [2, 3], chunkOf);
    expect(sources).toEqual([
      { document: 'notes/curie.md', chunks: ['t1'], items: [2, 4], cited: [2] },
      { document: 'b.txt', chunks: ['t2'], items: [3], cited: [3] },
    ]);
    // Without a resolver a text item is its own chunk.
    expect(buildSources(ITEMS)[0]).toEqual({
      document: 'notes/curie.md',
      chunks: ['t1'],
      items: [2, 4],
      cited: [],
    });
    const citations = buildCitations(ITEMS, [1, 3], chunkOf);
    expect(citations).toEqual([
      { n: 1, id: 'h1', type: 'high_level_element', document: null, chunk: null },
      { n: 3, id: 'u2', type: 'semantic_unit', document: 'b.txt', chunk: 't2' },
    ]);
    expect(sourceList(sources, citations)).toBe('[1] (high level element)\n[3] b.txt');
    expect(sourceList(sources, [])).toBe('[2][4] notes/curie.md\n[3] b.txt');
  });

  it('the local answer cites the items it quotes, and the citations resolve', () => {
    const answer = localAnswer(citedContext(ITEMS), 'What did Marie Curie discover?', 'English');
    expect(answer).toBe(
      'Based on the retrieved context:\n- Marie Curie discovered radium in 1898. [2]\n- Marie Curie was a physicist. [4]',
    );
    const cited = citedNumbers(answer, ITEMS.length);
    expect(cited).toEqual([2, 4]);
    expect(buildSources(ITEMS, cited, chunkOf).map((s) => [s.document, s.cited])).toEqual([
      ['notes/curie.md', [2, 4]],
      ['b.txt', []],
    ]);
    // The §6.6 form (numbers per section) still parses, without citations.
    expect(
      localAnswer(
        '------------text-------------\n1. Marie Curie discovered radium.\n',
        'What did Marie Curie discover?',
        'English',
      ),
    ).toBe('Based on the retrieved context:\n- Marie Curie discovered radium.');
  });

  it('the answer prompt asks for [n] citations and puts earlier turns before the question', () => {
    const messages = renderPrompt({
      task: 'answer',
      language: 'English',
      input: {
        context: citedContext(ITEMS),
        question: 'And Pierre?',
        history: [
          { role: 'user', content: 'Who was Marie Curie?' },
          { role: 'assistant', content: 'A physicist [4].' },
        ],
      },
    });
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[0]?.content).toContain('such as [2] or [1][4]');
    expect(messages[1]?.content).toBe('Who was Marie Curie?');
    expect(messages[3]?.content).toMatch(/^Context:\n-{12}high_level_element-{13}\n\[1\] Science/);
    expect(messages[3]?.content.endsWith('Question: And Pierre?')).toBe(true);
    const zh = renderPrompt({
      task: 'answer',
      language: 'Chinese',
      input: { context: '', question: '谁？' },
    });
    expect(zh.map((m) => m.role)).toEqual(['system', 'user']);
    expect(zh[0]?.content).toContain('[1][4]');
  });
});

describe('sourcesJson', () => {
  it('is JSON.stringify of the sources, byte for byte', () => {
    const sources = [
      { document: 'a "quoted" \\ path\n.md', chunks: ['c1', 'c2'], items: [1, 3], cited: [3] },
      { document: 'é/北京.txt', chunks: [], items: [2], cited: [] },
    ];
    expect(sourcesJson(sources, (s) => JSON.stringify(s))).toBe(JSON.stringify(sources));
    expect(sourcesJson([], (s) => JSON.stringify(s))).toBe('[]');
  });
});
