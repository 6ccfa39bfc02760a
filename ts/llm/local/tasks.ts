/**
 * The local provider's answers to the six prompts (docs/method.md §7.7), computed from the task
 * inputs. Honest extractive heuristics: every output is text taken from the input.
 *
 * Refinements over §7.7, all deterministic:
 * - D: a Markdown heading line is not a unit (it states nothing); it still counts for names.
 * - Names: lowercase connectors inside a name ("University of Paris"), leading function
 *   words dropped ("In Paris" → "Paris"), and a one-word name at the start of a sentence
 *   kept when the same word appears capitalised mid-sentence elsewhere in the chunk.
 * - Chinese: entities are runs of ICU-segmented Han words without stop words ("居里夫人"),
 *   years with 年, and Latin-script names; the fallback relation is "相关".
 * - A (attribute): semantic units are preferred over relationship phrases (they read as
 *   sentences); relationships fill up when there are fewer than three units.
 * - Q (query): years count as elements, like names.
 * - ANS (answer): from each non-empty section, the sentence of its first three items that
 *   shares the most words (crudely stemmed) with the question, ties to the earliest, not
 *   blindly the first item; bare headings and fragments are not quoted, sections with
 *   nothing in common with the question are left out, repeats dropped, at most five lines.
 *   When the context numbers its items `[n]` (the answer prompt's form), each line cites
 *   the item it quotes, `[n]`, as a model is asked to.
 */
import type { Language, TaskOutputs } from '../types.js';
import { firstSentence, splitSentences } from './sentences.js';
import {
  capitalisedRuns,
  chineseTerms,
  hasHan,
  isCapitalised,
  isChineseStopWord,
  isStopWord,
  isYear,
  type Run,
  segmentChinese,
  type Word,
  words,
} from './words.js';

const RELATED_TO: Readonly<Record<Language, string>> = { English: 'RELATED TO', Chinese: '相关' };

/**
 * Words that appear capitalised somewhere other than at the start of a sentence.
 * `sentenceWords[i]` is `words(sentences[i])` (the callers reuse it).
 */
function namesInText(sentenceWords: readonly (readonly Word[])[]): Set<string> {
  const names = new Set<string>();
  for (const ws of sentenceWords) {
    for (let i = 1; i < ws.length; i++) {
      const w = (ws[i] as Word).text;
      if (isCapitalised(w) && !isStopWord(w)) names.add(w);
    }
  }
  return names;
}

/** Entity occurrences of one sentence, in position order (duplicates kept); `ws` = words(sentence). */
function entityRuns(
  sentence: string,
  language: Language,
  names: ReadonlySet<string>,
  ws: readonly Word[],
): Run[] {
  if (language === 'Chinese') return chineseTerms(sentence);
  const runs = capitalisedRuns(sentence, (w) => names.has(w), ws);
  for (const w of ws) {
    if (!isYear(w.text)) continue;
    // A year inside a run found so far is part of it.
    let inRun = false;
    for (let r = 0; r < runs.length && !inRun; r++) {
      const run = runs[r] as Run;
      inRun = run.start <= w.start && w.end <= run.end;
    }
    if (!inRun) runs.push({ text: w.text, start: w.start, end: w.end, size: 1 });
  }
  return runs.sort((a, b) => a.start - b.start);
}

function entityName(run: Run, language: Language): string {
  return language === 'English' ? run.text.toUpperCase() : run.text;
}

/** The 1–4 words between two entities, or the fallback relation. */
function relationBetween(sentence: string, a: Run, b: Run, language: Language): string {
  const between = sentence.slice(a.end, b.start);
  if (language === 'Chinese') {
    const segs = segmentChinese(between).filter((s) => s.wordLike);
    if (segs.length >= 1 && segs.length <= 4) return segs.map((s) => s.text).join('');
    return RELATED_TO.Chinese;
  }
  // A possessive left after the first entity ("Curie's husband") is not a relation word.
  const ws = words(between.replace(/^['’]s\b/u, ''));
  if (ws.length >= 1 && ws.length <= 4) return ws.map((w) => w.text).join(' ');
  return RELATED_TO.English;
}

/** A Markdown heading line: a title, not an event or a claim, so not a unit. */
function isHeading(sentence: string): boolean {
  return /^#{1,6}\s/u.test(sentence);
}

export function localDecompose(text: string, language: Language): TaskOutputs['decompose'] {
  const sentences = splitSentences(text);
  const sentenceWords = sentences.map((s) => words(s));
  const names = namesInText(sentenceWords);
  const Output = sentences
    .map((sentence, i) => ({ sentence, ws: sentenceWords[i] as Word[] }))
    .filter(({ sentence }) => !isHeading(sentence))
    .map(({ sentence, ws }) => {
      const runs = entityRuns(sentence, language, names, ws);
      const entities: string[] = [];
      for (const r of runs) {
        const name = entityName(r, language);
        if (!entities.includes(name)) entities.push(name);
      }
      const relationships: string[] = [];
      for (let i = 0; i + 1 < runs.length; i++) {
        const a = runs[i] as Run;
        const b = runs[i + 1] as Run;
        const an = entityName(a, language);
        const bn = entityName(b, language);
        if (an === bn) continue;
        const rel = `${an}, ${relationBetween(sentence, a, b, language)}, ${bn}`;
        if (!relationships.includes(rel)) relationships.push(rel);
      }
      return { semantic_unit: sentence, entities, relationships };
    });
  return { Output };
}

/** R: split at the first and the last comma (ASCII or full-width). */
export function localRepair(relationship: string): TaskOutputs['repair'] {
  const s = relationship.trim();
  const first = s.search(/[,，]/u);
  let last = -1;
  for (let i = s.length - 1; i >= 0; i--) {
    if (s[i] === ',' || s[i] === '，') {
      last = i;
      break;
    }
  }
  if (first < 0 || first === last) return { source: '', relationship: '', target: '' };
  return {
    source: s.slice(0, first).trim(),
    relationship: s.slice(first + 1, last).trim(),
    target: s.slice(last + 1).trim(),
  };
}

function joinSentences(parts: readonly string[], language: Language): string {
  return parts.join(language === 'Chinese' ? '' : ' ');
}

/** A: the first sentence of each of the three best items (units first, see above). */
export function localAttribute(
  entity: string,
  units: readonly string[],
  relationships: readonly string[],
  language: Language,
): string {
  const picked: string[] = [];
  for (const item of [...units, ...relationships]) {
    if (picked.length >= 3) break;
    const s = firstSentence(item);
    if (s && !picked.includes(s)) picked.push(s);
  }
  if (picked.length === 0) return entity.trim();
  return joinSentences(picked, language);
}

/** C: one element; title = the most frequent name in the member texts (ties: first seen). */
export function localCommunity(texts: readonly string[], language: Language): TaskOutputs['community'] {
  const counts = new Map<string, { count: number; order: number; display: string }>();
  let order = 0;
  for (const t of texts) {
    const sentences = splitSentences(t);
    const sentenceWords = sentences.map((s) => words(s));
    const names = namesInText(sentenceWords);
    for (let i = 0; i < sentences.length; i++) {
      const s = sentences[i] as string;
      const runs =
        language === 'Chinese'
          ? chineseTerms(s)
          : capitalisedRuns(s, (w) => names.has(w), sentenceWords[i]).filter((r) => !isYear(r.text));
      for (const r of runs) {
        const key = language === 'English' ? r.text.toUpperCase() : r.text;
        const c = counts.get(key);
        if (c) c.count++;
        else counts.set(key, { count: 1, order: order++, display: r.text });
      }
    }
  }
  let best: { count: number; order: number; display: string } | undefined;
  for (const c of counts.values()) {
    if (!best || c.count > best.count || (c.count === best.count && c.order < best.order)) best = c;
  }
  const firstText = texts.find((t) => t.trim() !== '') ?? '';
  let title = best?.display;
  if (!title) {
    const lead = firstSentence(firstText);
    title =
      language === 'Chinese'
        ? lead.slice(0, 12)
        : words(lead)
            .slice(0, 8)
            .map((w) => w.text)
            .join(' ');
  }
  const description = joinSentences(
    texts
      .filter((t) => t.trim() !== '')
      .slice(0, 2)
      .map(firstSentence),
    language,
  );
  if (!title || !description) return { high_level_elements: [] };
  return { high_level_elements: [{ title, description }] };
}

/** Q: names (and years), then other content words of at least 4 letters, in question order. */
export function localQuery(question: string, language: Language): TaskOutputs['query'] {
  const elements: string[] = [];
  const seen = new Set<string>();
  const add = (s: string) => {
    const k = s.toLowerCase();
    if (s && !seen.has(k)) {
      seen.add(k);
      elements.push(s);
    }
  };
  const sentences = splitSentences(question);
  if (language === 'Chinese') {
    for (const s of sentences) for (const r of chineseTerms(s)) add(r.text);
    return { elements };
  }
  const sentenceWords = sentences.map((s) => words(s));
  const names = namesInText(sentenceWords);
  // Spans of the runs in the question, as pairs [start, end, start, end, …].
  const covered: number[] = [];
  let offset = 0;
  for (let i = 0; i < sentences.length; i++) {
    const s = sentences[i] as string;
    const base = question.indexOf(s, offset);
    offset = base + s.length;
    for (const r of entityRuns(s, 'English', names, sentenceWords[i] as Word[])) {
      add(r.text);
      covered.push(base + r.start, base + r.end);
    }
  }
  // A question that is one sentence (the usual case) has that sentence's words.
  const questionWords =
    sentences.length === 1 && sentences[0] === question ? (sentenceWords[0] as Word[]) : words(question);
  for (const w of questionWords) {
    let inRun = false;
    for (let c = 0; c < covered.length && !inRun; c += 2) {
      inRun = (covered[c] as number) <= w.start && w.end <= (covered[c + 1] as number);
    }
    if (inRun) continue;
    if (letterCount(w.text) >= 4 && !isStopWord(w.text) && !hasHan(w.text)) add(w.text);
  }
  return { elements };
}

const LETTERS_ONLY = /^\p{L}*$/u;
const NOT_LETTER = /[^\p{L}]/gu;

/** Letters in `w` (what is left once every non-letter is removed). */
function letterCount(w: string): number {
  return LETTERS_ONLY.test(w) ? w.length : w.replace(NOT_LETTER, '').length;
}

const ANSWER_LEAD: Readonly<Record<Language, string>> = {
  English: 'Based on the retrieved context:',
  Chinese: '根据检索到的上下文：',
};
const ANSWER_EMPTY: Readonly<Record<Language, string>> = {
  English: 'The retrieved context does not contain information to answer this question.',
  Chinese: '检索到的上下文中没有可以回答这个问题的信息。',
};

/**
 * Sections of the §6.6 context string: `------------<type>-------------` then `n. item` lines
 * (numbered per section), or the answer prompt's form with `[n] item` lines numbered across
 * the context (ts/search/sources.ts); `numbers` holds those `[n]`, empty in the first form.
 */
export function parseContext(context: string): Array<{ type: string; items: string[]; numbers: number[] }> {
  const sections: Array<{ type: string; items: string[]; numbers: number[] }> = [];
  let current: { type: string; items: string[]; numbers: number[] } | undefined;
  let lastCited = 0;
  for (const line of context.split('\n')) {
    const header = /^-{12}(\w+)-{13}$/.exec(line);
    if (header) {
      current = { type: header[1] as string, items: [], numbers: [] };
      sections.push(current);
      continue;
    }
    if (!current) continue;
    const item = /^(\d+)\. (.*)$/.exec(line);
    const cited = /^\[(\d+)\] (.*)$/.exec(line);
    if (item && current.numbers.length === 0 && Number(item[1]) === current.items.length + 1) {
      current.items.push(item[2] as string);
    } else if (
      cited &&
      Number(cited[1]) === lastCited + 1 &&
      current.items.length === current.numbers.length
    ) {
      lastCited++;
      current.items.push(cited[2] as string);
      current.numbers.push(lastCited);
    } else if (current.items.length > 0) {
      // Inner lines of an item, blank ones included (paragraph breaks of a text chunk).
      current.items[current.items.length - 1] += `\n${line}`;
    }
  }
  for (const s of sections) s.items = s.items.map((i) => i.trim());
  return sections.filter((s) => s.items.length > 0);
}

/** Crude English stemming, enough for "discovered" to meet "discover". */
function stem(w: string): string {
  const l = w.toLowerCase();
  if (l.length <= 4) return l;
  return l.replace(/(?:ing|ed|es|s)$/u, '');
}

function keywordsOf(question: string, language: Language): string[] {
  const { elements } = localQuery(question, language);
  if (language === 'Chinese') {
    const keys = new Set<string>(elements);
    for (const s of segmentChinese(question)) {
      if (s.wordLike && s.text.length >= 2 && !isChineseStopWord(s.text)) keys.add(s.text);
    }
    return [...keys];
  }
  const keys = new Set<string>();
  for (const e of elements) for (const w of words(e)) if (!isStopWord(w.text)) keys.add(stem(w.text));
  return [...keys];
}

function relevance(sentence: string, keys: readonly string[], language: Language): number {
  if (language === 'Chinese') return keys.filter((k) => sentence.includes(k)).length;
  const present = new Set(words(sentence).map((w) => stem(w.text)));
  return keys.filter((k) => present.has(k)).length;
}

/** A sentence worth quoting: not a bare Markdown heading, not a fragment of one or two words. */
function quotable(sentence: string, language: Language): boolean {
  if (isHeading(sentence)) return false;
  return language === 'Chinese' ? sentence.length >= 6 : words(sentence).length >= 3;
}

const MAX_ANSWER_SENTENCES = 5;

/**
 * ANS: "Based on the retrieved context:" and, per non-empty section in context order, the
 * sentence of its first three items that shares the most words with the question (ties:
 * the earliest). Sections whose best sentence shares nothing with the question are left
 * out, unless no section shares anything (then each section's first sentence is used).
 */
export function localAnswer(context: string, question: string, language: Language): string {
  const sections = parseContext(context);
  if (sections.length === 0) return ANSWER_EMPTY[language];
  const keys = keywordsOf(question, language);
  const best: Array<{ sentence: string; score: number; n: number | undefined }> = [];
  for (const section of sections) {
    const sentences = section.items
      .slice(0, 3)
      .flatMap((item, i) => splitSentences(item).map((sentence) => ({ sentence, n: section.numbers[i] })));
    const candidates = sentences.filter((s) => quotable(s.sentence, language));
    let top: { sentence: string; score: number; n: number | undefined } | undefined;
    for (const { sentence, n } of candidates.length > 0 ? candidates : sentences) {
      const score = relevance(sentence, keys, language);
      if (!top || score > top.score) top = { sentence, score, n };
    }
    if (top) best.push(top);
  }
  const anyRelevant = best.some((b) => b.score > 0);
  const picked: Array<{ text: string; n: number | undefined }> = [];
  for (const b of best) {
    if (anyRelevant && b.score === 0) continue;
    const flat = b.sentence.replace(/\s*\n\s*/g, ' ');
    const clipped = flat.length > 400 ? `${flat.slice(0, 397)}...` : flat;
    const folded = clipped.toLowerCase();
    if (picked.some((p) => p.text.toLowerCase().includes(folded) || folded.includes(p.text.toLowerCase())))
      continue;
    picked.push({ text: clipped, n: b.n });
    if (picked.length >= MAX_ANSWER_SENTENCES) break;
  }
  const lines = picked.map((p) => (p.n === undefined ? `- ${p.text}` : `- ${p.text} [${p.n}]`));
  return [ANSWER_LEAD[language], ...lines].join('\n');
}
