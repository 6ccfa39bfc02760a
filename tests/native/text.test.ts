import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../ts/errors.js';
import { textOps } from '../../ts/indexing/stages/core.js';
import {
  attributeId,
  chunkRows,
  chunkText,
  chunkTextAsync,
  cleanText,
  countTokens,
  countTokensBatch,
  countTokensMemo,
  encodeTokens,
  entityId,
  entityIdOfNormalized,
  finalizeUnit,
  fold,
  hashId,
  highLevelElementId,
  highLevelElementTitleId,
  normalizeEntities,
  normEntity,
  normText,
  parseRelationship,
  parseUnit,
  relationshipId,
  semanticUnitId,
  textId,
  truncateToTokens,
} from '../../ts/text/index.js';
import { jsTextOps } from '../helpers/js-text-ops.js';

const MARIE = 'df55c077da9a492e6122574089591bd17829c6f4d71c323d9e20976aa2e9788e';
const PARIS = '14d8b063e1b01733d61353c188fa5b80d7790b3c6c0881cbf548a632c6813fbf';

describe('docs/method.md §2.1 test vectors through the addon', () => {
  it('entities', () => {
    expect(normEntity('  Marie\tCurie ', 'English')).toBe('MARIE CURIE');
    expect(entityId('  Marie\tCurie ', 'English')).toBe(MARIE);
    expect(normEntity('Paris', 'English')).toBe('PARIS');
    expect(entityId('Paris', 'English')).toBe(PARIS);
    expect(entityIdOfNormalized('MARIE CURIE')).toBe(MARIE);
    expect(normEntity('ＡＩ', 'English')).toBe('AI');
    expect(entityId('ＡＩ', 'English')).toBe(
      'a4782eef32492fe9050aaf8f0562a46893df5eb8f2b79b3cbe4fa79ef063ef76',
    );
    expect(normEntity('居里夫人', 'Chinese')).toBe('居里夫人');
    expect(entityId('居里夫人', 'Chinese')).toBe(
      'c4e1e01b11eee03ef79fc210523f264ea503fcd604b56e2a2822742bceb360e9',
    );
  });

  it('relationship, attribute and text', () => {
    const rel = '4db555214a445ed00e7a84ae87d7fb59e5215608faffaa1015d4ceaa0f046f35';
    expect(relationshipId(MARIE, PARIS)).toBe(rel);
    expect(relationshipId(PARIS, MARIE)).toBe(rel);
    expect(relationshipId(PARIS, PARIS)).toBeNull();
    expect(attributeId(MARIE)).toBe('1aa41d4deb4861d7adf76727763f9c24e3bcfee85040ff803bae264c772caf81');
    expect(normText('Hello  world.\n')).toBe('Hello world.');
    expect(textId('Hello  world.\n')).toBe(
      'b9ec61ebd939b0c12ccfb5ca767aadd68577cfa469a437793f315be47c3ab5c3',
    );
  });

  it('typed helpers are H of their tag over the normal form', () => {
    expect(hashId('entity', 'PARIS')).toBe(PARIS);
    expect(semanticUnitId(' a\u3000 b ')).toBe(hashId('semantic_unit', 'a b'));
    expect(highLevelElementId('x\n\ny')).toBe(hashId('high_level_element', 'x y'));
    expect(highLevelElementTitleId(MARIE)).toBe(hashId('high_level_element_title', MARIE));
    expect(entityId(' \t\u3000', 'English')).toBeNull();
  });

  it("the unit tests' JS stand-in makes the core's ids on ASCII text", () => {
    for (const ops of [textOps, jsTextOps]) {
      expect(ops.entityIdOfNormalized('PARIS')).toBe(PARIS);
      expect(ops.relationshipId(PARIS, MARIE)).toBe(relationshipId(MARIE, PARIS));
      expect(ops.relationshipId(MARIE, MARIE)).toBeNull();
      expect(ops.semanticUnitId('  Marie  Curie\tworked. ')).toBe(semanticUnitId('Marie Curie worked.'));
      expect(ops.highLevelElementId('A  theme.\n')).toBe(highLevelElementId('A theme.'));
      expect(ops.highLevelElementTitleId(MARIE)).toBe(highLevelElementTitleId(MARIE));
      expect(ops.fold(' Marie  CURIE ')).toBe(fold('marie curie'));
    }
  });

  it('rejects bad tags and languages with InvalidArgumentError', () => {
    expect(() => hashId('a:b', 'c')).toThrow(InvalidArgumentError);
    expect(() => hashId('a:b', 'c')).toThrow(/tag/);
    // A value outside the declared union, as it could arrive from unchecked input.
    const lang = 'Klingon' as 'English';
    expect(() => normEntity('x', lang)).toThrow(InvalidArgumentError);
  });
});

describe('normal forms', () => {
  it('U+FEFF is not whitespace, unlike String.prototype.trim', () => {
    expect('\uFEFFx '.trim()).toBe('x');
    expect(normText('\uFEFFx ')).toBe('\uFEFFx');
  });

  it('casing is full and locale-independent', () => {
    expect(normEntity('straße', 'English')).toBe('STRASSE');
    expect(fold('  PARIS\u00a0Agreement ')).toBe('paris agreement');
  });

  it('cleanText normalises line ends and drops control characters', () => {
    expect(cleanText('a\r\nb\rc\u0000d\u0007\te\n')).toBe('a\nb\ncd\te\n');
  });
});

describe('o200k_base token counts', () => {
  // Expected values from tiktoken-rs 0.12.1 (o200k_base, encode_ordinary).
  it('matches tiktoken on known strings', () => {
    expect(countTokens('hello world')).toBe(2);
    expect([...encodeTokens('hello world')]).toEqual([24912, 2375]);
    expect(countTokens('Marie Curie discovered radium in 1898.')).toBe(11);
    expect(countTokens('北京是中国的首都。上海是最大的城市！')).toBe(12);
    expect(countTokens('')).toBe(0);
    expect(countTokens('🙂🙂')).toBe(2);
  });

  it('the remembering count equals the plain count, the first time and from its memo', () => {
    const header = (t: string) => `${'-'.repeat(12)}${t}${'-'.repeat(13)}`;
    const context = [
      header('attribute'),
      '1. Nick Hexum (born April 12, 1970) is an American singer.',
      '2. "Freak Out" was co-written by Chad Sexton.',
      '',
      header('text'),
      '1. Title\n\nBody with a /slash and 3.5 numbers.',
      '12. 東京 and naïve café — done.',
      '',
    ].join('\n');
    const texts = [
      context,
      `${context}\n`,
      'a.\n/b',
      'line\n  indented\n\ttab',
      '1.x\n2.  two spaces\n 3. leading space',
      'crlf\r\nnext\rcr',
      '',
      '\n\n\n',
      "it's\nIT'S\n'S",
    ];
    for (let round = 0; round < 2; round++) {
      for (const t of texts) expect(countTokensMemo(t), JSON.stringify(t)).toBe(countTokens(t));
    }
  });

  it('batch counts equal single counts', () => {
    const texts = ['hello world', '', '居里夫人', 'a   b', "don't"];
    const batch = countTokensBatch(texts);
    expect(batch).toBeInstanceOf(Uint32Array);
    expect([...batch]).toEqual(texts.map(countTokens));
    expect(countTokensBatch([]).length).toBe(0);
  });

  it('truncation stays within the budget and on character boundaries', () => {
    expect(truncateToTokens('hello world', 1)).toBe('hello');
    expect(truncateToTokens('hello world', 9)).toBe('hello world');
    const emoji = '🙂'.repeat(50);
    for (const k of [1, 7, 20]) {
      const t = truncateToTokens(emoji, k);
      expect(countTokens(t)).toBeLessThanOrEqual(k);
      expect(emoji.startsWith(t)).toBe(true);
      expect(t.length % 2).toBe(0); // never half a surrogate pair
    }
    expect(() => truncateToTokens('x', -1)).toThrow(InvalidArgumentError);
  });
});

/** Deterministic text from a word list (xorshift, seed fixed). */
function makeText(words: string[], ends: string[], seed: number, paragraphs: number, sep: string): string {
  let x = seed;
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  const paras: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const sentences: string[] = [];
    for (let s = 0, ns = 2 + (next() % 5); s < ns; s++) {
      const w: string[] = [];
      for (let i = 0, nw = 4 + (next() % 12); i < nw; i++) w.push(words[next() % words.length]!);
      sentences.push(w.join(sep) + ends[next() % ends.length]!);
    }
    paras.push(sentences.join(sep));
  }
  return paras.join('\n\n');
}

const EN_WORDS = [
  'the',
  'observatory',
  'recorded',
  'spectral',
  'lines',
  'of',
  'distant',
  'galaxies',
  "it's",
  'café',
  '2024',
  'state-of-the-art',
  '🙂',
];
const ZH_WORDS = ['天文台', '望远镜', '观测', '星系', '的', '光谱', '数据', '研究员', '记录', '夜空'];

const strip = (s: string): string => s.replace(/\s+/gu, '');

function checkChunks(text: string, chunkSize: number): ReturnType<typeof chunkRows> {
  const c = chunkText(text, chunkSize);
  expect(c.tokenCounts).toBeInstanceOf(Uint32Array);
  expect(c.starts).toBeInstanceOf(Uint32Array);
  const rows = chunkRows(c);
  let prevEnd = 0;
  for (const r of rows) {
    expect(r.text.length).toBeGreaterThan(0);
    expect(text.slice(r.start, r.end)).toBe(r.text); // offsets are UTF-16 units
    expect(r.tokens).toBe(countTokens(r.text));
    expect(r.tokens).toBeLessThanOrEqual(chunkSize);
    expect(r.start).toBeGreaterThanOrEqual(prevEnd);
    prevEnd = r.end;
  }
  expect(strip(rows.map((r) => r.text).join(''))).toBe(strip(text));
  return rows;
}

describe('chunkText', () => {
  it('English: within budget, all text kept, never mid-word', () => {
    const text = makeText(EN_WORDS, ['.', '!', '?', '."'], 7, 40, ' ');
    const seg = new Intl.Segmenter('en', { granularity: 'word' });
    const bounds = new Set<number>([text.length]);
    for (const s of seg.segment(text)) bounds.add(s.index);
    for (const size of [64, 200]) {
      const rows = checkChunks(text, size);
      expect(rows.length).toBeGreaterThan(3);
      for (const r of rows) {
        expect(bounds.has(r.start), `starts mid-word: ${r.text.slice(0, 20)}`).toBe(true);
        expect(bounds.has(r.end), `ends mid-word: ${r.text.slice(-20)}`).toBe(true);
      }
    }
  });

  it('Chinese: within budget, all text kept, cut at sentence marks', () => {
    // One long paragraph without line breaks: sentence marks are the strongest cut points.
    const text = makeText(ZH_WORDS, ['。', '！', '？', '。」'], 11, 12, '').replace(/\n/gu, '');
    const rows = checkChunks(text, 64);
    expect(rows.length).toBeGreaterThan(3);
    for (const r of rows.slice(0, -1)) expect(r.text).toMatch(/[。！？」]$/u);
  });

  it('splits only a word longer than the budget, at a token boundary', () => {
    let x = 99;
    const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    let blob = '';
    for (let i = 0; i < 3000; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      blob += alnum[x % alnum.length];
    }
    const text = `Intro line.\n\n${blob}\n\nOutro line.`;
    const rows = checkChunks(text, 64);
    expect(rows[0]!.text).toBe('Intro line.');
    expect(rows.length).toBeGreaterThan(5);
    // The blob comes back whole, cut into pieces that fill the budget.
    expect(
      rows
        .slice(1)
        .map((r) => r.text)
        .join('')
        .startsWith(blob),
    ).toBe(true);
    expect(rows[1]!.tokens).toBeGreaterThan(60);
  });

  it('is deterministic, and the async variant agrees', async () => {
    const text = makeText(EN_WORDS, ['.'], 3, 20, ' ');
    const a = chunkText(text, 100);
    const b = await chunkTextAsync(text, 100);
    expect(b.texts).toEqual(a.texts);
    expect([...b.starts]).toEqual([...a.starts]);
    expect([...b.tokenCounts]).toEqual([...a.tokenCounts]);
    expect(chunkText(text, 100).texts).toEqual(a.texts);
  });

  it('handles empty text and rejects a bad chunk size', async () => {
    expect(chunkText(' \n ', 10).texts).toEqual([]);
    expect(() => chunkText('x', 0)).toThrow(InvalidArgumentError);
    expect(() => chunkText('x', 1.5)).toThrow(InvalidArgumentError);
    await expect(chunkTextAsync('x', -1)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('relationship strings (§3.3)', () => {
  it('parses, repairs nothing itself, and finalises a unit', () => {
    const entities = normalizeEntities(['Apple, Inc.', ' apple,  inc.', 'Cupertino'], 'English');
    expect(entities).toEqual(['APPLE, INC.', 'CUPERTINO']);
    const a = parseRelationship('(Apple, Inc., is based in, Cupertino)', entities, 'English');
    expect(a).toEqual({
      status: 'parsed',
      method: 'entity_split',
      source: 'Apple, Inc.',
      relation: 'is based in',
      target: 'Cupertino',
    });
    const b = parseRelationship('Tim Cook | leads | Apple, Inc.', entities, 'English');
    expect(b).toMatchObject({ status: 'parsed', method: 'separator', source: 'Tim Cook' });
    expect(parseRelationship('Apple makes phones', entities, 'English')).toEqual({ status: 'needs_repair' });
    expect(parseRelationship(' "" ', entities, 'English')).toEqual({ status: 'empty' });

    if (a.status !== 'parsed' || b.status !== 'parsed') throw new Error('unreachable');
    const unit = finalizeUnit(
      entities,
      [a, b, { source: 'cupertino', relation: 'is', target: 'Cupertino ' }],
      'English',
    );
    expect(unit.entities).toEqual(['APPLE, INC.', 'CUPERTINO', 'TIM COOK']);
    expect(unit.relationships).toEqual([
      { source: 'APPLE, INC.', relation: 'is based in', target: 'CUPERTINO' },
      { source: 'TIM COOK', relation: 'leads', target: 'APPLE, INC.' },
    ]);
    expect(unit.dropped).toEqual([{ index: 2, reason: 'same_entity' }]);
  });

  it('parseUnit gives what the per-string calls give, finalising only without repairs', () => {
    const names = ['Apple, Inc.', ' apple,  inc.', 'Cupertino', '', 'Tim Cook'];
    const clean = [
      '(Apple, Inc., is based in, Cupertino)',
      'Tim Cook | leads | Apple, Inc.',
      ' "" ',
      'cupertino, is, Cupertino ',
      ' , , ',
      'Jobs; founded; Apple, Inc.',
    ];
    for (const [strings, repairs] of [
      [clean.filter((s) => s !== ' , , '), false],
      [clean, true],
      [[...clean, 'Apple makes phones'], true],
      [[], false],
    ] as const) {
      const entities = normalizeEntities(names, 'English');
      const parses = strings.map((s) => parseRelationship(s, entities, 'English'));
      const u = parseUnit(names, strings, 'English');
      expect(u.entities).toEqual(entities);
      expect(u.parses).toEqual(parses);
      const triples = parses.flatMap((p) =>
        p.status === 'parsed' ? [{ source: p.source, relation: p.relation, target: p.target }] : [],
      );
      expect(u.final).toEqual(repairs ? null : finalizeUnit(entities, triples, 'English'));
    }
    expect(() => parseUnit([], [], 'Klingon' as 'English')).toThrow(InvalidArgumentError);
  });
});
