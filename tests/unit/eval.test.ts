/**
 * ts/eval without an index: the questions file, `--set` parsing, supporting-entry
 * resolution and scoring (the naive budget fill, which needs the addon, is in
 * tests/native/eval-naive.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  containsAnswer,
  isMatchable,
  isYesNo,
  parseQuestions,
  parseSetting,
  parseSettings,
  QuestionsFileError,
  resolveSupporting,
  SettingError,
  scoreContext,
  summarise,
} from '../../ts/eval/index.js';

describe('questions file', () => {
  it('reads one question per line, skipping blank lines, ignoring other keys', () => {
    const qs = parseQuestions(
      '{"question": "Who?", "answers": ["Okafor"], "id": 7}\n\n{"question": "When?", "answers": ["1921", "in 1921"], "supporting": ["a.md", "some text"]}\r\n',
      'q.jsonl',
    );
    expect(qs).toEqual([
      { question: 'Who?', answers: ['Okafor'], supporting: [], line: 1 },
      { question: 'When?', answers: ['1921', 'in 1921'], supporting: ['a.md', 'some text'], line: 3 },
    ]);
  });

  it.each([
    ['[1, 2]', 'q.jsonl:2: expected an object {"question": string'],
    ['{"answers": ["x"]}', 'q.jsonl:2: "question": expected a non-empty string, got nothing'],
    ['{"question": "  ", "answers": ["x"]}', 'q.jsonl:2: "question": expected a non-empty string'],
    [
      '{"question": "q", "answers": []}',
      'q.jsonl:2: "answers": expected a non-empty array of non-empty strings, got an array',
    ],
    ['{"question": "q", "answers": [""]}', 'q.jsonl:2: "answers": expected a non-empty array'],
    [
      '{"question": "q", "answers": ["a"], "supporting": "a.md"}',
      'q.jsonl:2: "supporting": expected an array',
    ],
    ['{"question": "q", "answers": ["a"]', 'q.jsonl:2: not valid JSON ('],
    [
      `{"question": "${'x'.repeat(8001)}", "answers": ["a"]}`,
      'q.jsonl:2: "question" has 8001 characters; the limit is 8000',
    ],
  ])('line 2 = %s: names the file, the line and what was expected', (line, message) => {
    const text = `{"question": "ok", "answers": ["fine"]}\n${line}\n`;
    expect(() => parseQuestions(text, 'q.jsonl')).toThrow(QuestionsFileError);
    expect(() => parseQuestions(text, 'q.jsonl')).toThrow(message);
  });

  it('an empty file is an error', () => {
    expect(() => parseQuestions('\n\n', 'q.jsonl')).toThrow('q.jsonl: no questions');
  });
});

describe('--set', () => {
  it('reads values as YAML scalars; config. prefix allowed; later wins', () => {
    expect(parseSetting('HNSW_results=20')).toEqual({ key: 'HNSW_results', value: 20 });
    expect(parseSetting('config.ppr_mode=restart')).toEqual({ key: 'ppr_mode', value: 'restart' });
    expect(parseSetting('unbalance_adjust=false')).toEqual({ key: 'unbalance_adjust', value: false });
    expect(parseSettings(['Rnode=5', 'ppr_alpha=0.3', 'Rnode=0'])).toEqual({ Rnode: 0, ppr_alpha: 0.3 });
  });

  it.each([
    ['Rnode', /expected key=value/],
    ['Rnode=', /Rnode: expected key=value with a value/],
    ['chunk_size=64', /chunk_size: not a search-time key/],
    ['rnode=3', /rnode: unknown key \(did you mean Rnode\?\)/],
    ['nope=3', /nope: unknown key; search-time keys: HNSW_results/],
    ['HNSW_results=null', /HNSW_results: expected a value, got "null" \(null\)/],
    ['Rnode=~', /Rnode: expected a value, got "~" \(null\)/],
  ])('%s is refused', (text, message) => {
    expect(() => parseSetting(text)).toThrow(SettingError);
    expect(() => parseSetting(text)).toThrow(message);
  });
});

describe('scoring', () => {
  it('answers match normalised, on word boundaries', () => {
    expect(containsAnswer('It was founded by Margaret  Okafor.', 'margaret okafor')).toBe(true);
    expect(containsAnswer('The answer is not here', 'no')).toBe(false);
    expect(containsAnswer('In 1921, the Pryce Reflector', 'the 1921')).toBe(true);
    expect(isYesNo('Yes')).toBe(true);
    // An answer of articles and punctuation only normalises to nothing: never found.
    for (const a of ['The', 'A.', 'the the', ' an ']) {
      expect(isMatchable(a), a).toBe(false);
      expect(containsAnswer(`Her blood type is ${a}.`, a)).toBe(false);
    }
    expect(isMatchable('The Who')).toBe(true);
  });

  it('punctuation inside a context word does not hide an answer; both Unicode forms match', () => {
    expect(containsAnswer("Margaret Okafor's telescope", 'Margaret Okafor')).toBe(true);
    expect(containsAnswer('installed in 1921\u20131925', '1921')).toBe(true);
    expect(containsAnswer('the \u00abObservatory Way\u00bb museum', 'Observatory Way')).toBe(true);
    expect(containsAnswer('to Krakow\u2026', 'Krakow')).toBe(true);
    expect(containsAnswer('born in Krako\u0301w', 'Krak\u00f3w')).toBe(true);
    // SQuAD's deletion still holds: "3,000" is "3000"; and no answer is made of word pieces.
    expect(containsAnswer('It cost 3,000 pounds.', '3000')).toBe(true);
    expect(containsAnswer("Okafor's telescope", 'Okafor s telescope')).toBe(true);
    expect(containsAnswer('The Okaforsson Prize', 'Okafor')).toBe(false);
  });

  it('answers in Chinese (no spaces between words) match as substrings, full-width punctuation ignored', () => {
    expect(containsAnswer('林若兰是天文台的第一位台长，她在1921年建成了反射望远镜。', '林若兰')).toBe(true);
    expect(containsAnswer('天文台建于1921年。', '1921年')).toBe(true);
    expect(containsAnswer('天文台建于1921年。', '林若兰')).toBe(false);
    expect(containsAnswer('「林若兰」', '林若兰')).toBe(true);
  });

  it('answers are looked for in each item’s text, never in item numbers, headers or across two items', () => {
    const texts = ['Jupiter has many moons.', 'Saturn has rings.'];
    const items = texts.map(() => ({ type: 'text', document: 'a.md' }));
    const found = (answer: string) => scoreContext([answer], [], texts, items, 1).answer;
    // As a context string these would read "------------text-------------\n1. Jupiter …\n2. Saturn …".
    expect(found('2')).toBe(false);
    expect(found('Text')).toBe(false);
    expect(found('moons Saturn')).toBe(false);
    expect(found('Saturn')).toBe(true);
    expect(found('many moons')).toBe(true);
  });

  it('supporting entries: indexed files (by path or unique name) or verbatim texts', () => {
    const q = {
      question: 'q',
      answers: ['x'],
      line: 4,
      supporting: ['input/dir/a.md', 'b.md', 'missing.md', 'A sentence of the corpus.'],
    };
    const { targets, warnings } = resolveSupporting([q], ['dir/a.md', 'other/b.md']);
    expect(targets[0]).toEqual([
      { kind: 'file', path: 'dir/a.md' },
      { kind: 'file', path: 'other/b.md' },
      { kind: 'text', text: 'missing.md' },
      { kind: 'text', text: 'A sentence of the corpus.' },
    ]);
    expect(warnings).toEqual([
      'line 4: supporting "missing.md" is no indexed input file; it is matched as a verbatim text',
    ]);
    const texts = ['a sentence of the corpus, and x'];
    const items = [
      { type: 'semantic_unit', document: 'dir/a.md' },
      { type: 'relationship', document: 'other/b.md' },
    ];
    const s = scoreContext(q.answers, targets[0]!, texts, items, 9);
    // a.md through a unit (verbatim, not a whole chunk); b.md only through a relationship.
    expect(s).toEqual({ answer: true, yesNo: false, support: 2, supportChunk: 1, gold: 4, tokens: 9 });
    const sum = summarise([s, { ...s, answer: false, support: 0, supportChunk: 0, gold: 0, tokens: 1 }]);
    expect(sum).toMatchObject({ questions: 2, answer: 0.5, support: 0.5, bothSupport: 0, tokens: 5 });
  });
});
