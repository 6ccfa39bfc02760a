/**
 * Word-level heuristics of the local provider (docs/method.md §7.7): word tokens, capitalised
 * runs, years, and for Chinese, dictionary word segmentation (ICU, through Intl.Segmenter).
 * All deterministic for a given Node.js build.
 */

export interface Word {
  text: string;
  start: number;
  end: number;
}

const WORD_RE = /\p{L}[\p{L}\p{M}\p{N}'’-]*|\p{N}+(?:[.,:]\p{N}+)*/gu;
const HAN_RE = /\p{Script=Han}/u;

/** The possessive and trailing marks `words` removes from a word. */
const TRIM_RE = /(?:['’]s)?['’-]*$/u;

export function words(text: string): Word[] {
  const out: Word[] = [];
  // `exec` on the shared global regex (reset first; nothing here runs another `words` in
  // between): `matchAll` clones the regex and makes an iterator on every call.
  const re = WORD_RE;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const raw = m[0];
    // Keep a trailing apostrophe or hyphen and the possessive out of the word ("Curies'" ->
    // "Curies", "Curie's" -> "Curie"): the name, not its genitive, is the entity, so the
    // corpus and a question ("Who was Curie's husband?") meet on the same entity. Only a
    // word ending in one of ' ’ - s can lose anything; the others skip the regex (every
    // question runs this).
    const w = mayTrim(raw) ? raw.replace(TRIM_RE, '') : raw;
    out.push({ text: w, start: m.index, end: m.index + w.length });
  }
  re.lastIndex = 0;
  return out;
}

/** Whether exactly one space separates the words ending at `end` and starting at `start`. */
function spaceBetween(text: string, end: number, start: number): boolean {
  return start - end === 1 && text.charCodeAt(end) === 0x20;
}

/** Whether ". " separates the words ending at `end` and starting at `start`. */
function stopSpaceBetween(text: string, end: number, start: number): boolean {
  return start - end === 2 && text.charCodeAt(end) === 0x2e && text.charCodeAt(end + 1) === 0x20;
}

/** Whether `w` ends in a character the possessive / trailing-mark trim can remove. */
function mayTrim(w: string): boolean {
  const last = w.charCodeAt(w.length - 1);
  return last === 0x27 || last === 0x2019 || last === 0x2d || last === 0x73;
}

export function isCapitalised(w: string): boolean {
  return /^[\p{Lu}\p{Lt}]/u.test(w);
}

export function isYear(w: string): boolean {
  return /^(1\d{3}|20\d{2})$/.test(w);
}

export function hasHan(s: string): boolean {
  return HAN_RE.test(s);
}

/** Function words and other capitalised words that are not names on their own. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also although am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each either else ever every few for from further ' +
    'had has have having he her here hers herself him himself his how however i if in into is it its itself just ' +
    'least less many may me might more most much must my myself neither no nor not now of off often on once only ' +
    'or other our ours ourselves out over own per perhaps same shall she should since so some such than that the ' +
    'their theirs them themselves then there therefore these they this those though through thus to too under ' +
    'until up upon us very was we were what whatever when where whether which while who whom whose why will with ' +
    'within without would yet you your yours yourself yourselves ' +
    // question and filler words that carry no content in a query
    'tell explain describe give list name show find please know known like well used using use make made ' +
    'does did done get got many much thing things way ways information kind kinds type types something anything ' +
    'one two three first second new ' +
    // sentence-initial adverbs that would otherwise start a capitalised run
    'later today yesterday meanwhile afterwards finally eventually initially subsequently recently currently ' +
    'soon still instead indeed moreover furthermore nevertheless nonetheless otherwise besides hence ' +
    'consequently additionally overall unlike despite according following'
  ).split(' '),
);

export function isStopWord(w: string): boolean {
  return ENGLISH_STOP_WORDS.has(w.toLowerCase());
}

/** Lowercase words allowed inside a name: "University of Paris", "Museum of the City". */
const NAME_CONNECTORS = new Set([
  'of',
  'the',
  'de',
  'du',
  'des',
  'la',
  'le',
  'von',
  'van',
  'der',
  'den',
  'da',
  'di',
  'del',
  'for',
]);

/** Words whose full stop does not end a name: initials and common titles. */
const NAME_PREFIXES = /^(\p{Lu}|Dr|Mr|Mrs|Ms|Prof|St|Sr|Jr|Gen|Sen|Rev)$/u;

export interface Run {
  text: string;
  start: number;
  end: number;
  /** Number of words in the run (connectors included). */
  size: number;
}

/**
 * Runs of capitalised words in one sentence, with lowercase name connectors allowed inside
 * ("Bank of England"), leading function words dropped ("In Paris" -> "Paris"), and a run
 * that is one sentence-initial word kept only if `isKnownName` says it appears as a name
 * elsewhere (§7.7: a sentence-initial word counts only in a run of two or more words).
 */
export function capitalisedRuns(
  sentence: string,
  isKnownName: (w: string) => boolean = () => false,
  /** `words(sentence)`, when the caller has it already. */
  ws: readonly Word[] = words(sentence),
): Run[] {
  const runs: Run[] = [];
  let i = 0;
  while (i < ws.length) {
    const w = ws[i] as Word;
    if (!isCapitalised(w.text)) {
      i++;
      continue;
    }
    // Extend the run: capitalised words separated by single spaces, or connectors followed
    // by a capitalised word.
    let j = i;
    let end = i;
    while (j + 1 < ws.length) {
      // Only a single space continues a name; punctuation or a line break ends it, except
      // the full stop of an initial or a title ("J. K. Rowling", "Dr. Smith").
      const next = ws[j + 1] as Word;
      const at = (ws[j] as Word).end;
      if (
        !spaceBetween(sentence, at, next.start) &&
        !(stopSpaceBetween(sentence, at, next.start) && NAME_PREFIXES.test((ws[j] as Word).text))
      )
        break;
      if (isCapitalised(next.text)) {
        j++;
        end = j;
        continue;
      }
      if (NAME_CONNECTORS.has(next.text) && j + 2 < ws.length) {
        // Allow up to two connectors ("of the") before the next capitalised word.
        let k = j + 1;
        let ok = false;
        while (k < ws.length && k <= j + 2) {
          if (!spaceBetween(sentence, (ws[k - 1] as Word).end, (ws[k] as Word).start)) break;
          if (isCapitalised((ws[k] as Word).text)) {
            ok = true;
            break;
          }
          if (!NAME_CONNECTORS.has((ws[k] as Word).text)) break;
          k++;
        }
        if (ok) {
          j = k;
          end = j;
          continue;
        }
      }
      break;
    }
    // Drop leading function words ("The", "In") and trailing connectors.
    let s = i;
    while (s <= end && isStopWord((ws[s] as Word).text)) s++;
    if (s <= end) {
      const first = ws[s] as Word;
      const last = ws[end] as Word;
      const size = end - s + 1;
      const sentenceInitial = s === 0;
      const text = sentence.slice(first.start, last.end);
      // A lone letter ("A" of a list, "K" of a stray initial) is not a name.
      const loneLetter = size === 1 && first.text.length === 1;
      if (!loneLetter && !(size === 1 && sentenceInitial && !isKnownName(first.text))) {
        runs.push({ text, start: first.start, end: last.end, size });
      }
    }
    i = end + 1;
  }
  return runs;
}

// ---------------------------------------------------------------------------------------
// Chinese

const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });

/** Function words, pronouns and very common verbs: never part of a Chinese entity. */
const CHINESE_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    '的 了 是 在 和 与 及 或 于 为 被 把 将 对 从 向 也 都 就 而 并 但 这 那 个 一 有 到 上 下 中 里 后 前 等 着 过 之 其 所 以 由 ' +
    '他 她 它 们 他们 她们 它们 我 我们 你 你们 这些 那些 这个 那个 这种 那种 一个 一种 没有 可以 已经 因为 所以 但是 如果 虽然 ' +
    '然而 并且 以及 通过 进行 成为 获得 发现 开始 包括 提出 认为 表示 使用 作为 具有 主要 重要 非常 很 最 更 还 又 再 曾 曾经 正在 ' +
    '之后 之前 时候 什么 哪些 哪个 如何 为什么 怎么 怎样 谁 吗 呢 吧 啊 哪 哪里 多少 几 是否 能 会 要 想 让 使 给 用 得 地 ' +
    '第一 第二 首先 其次 最后 同时 此外 另外 一些 许多 很多 各种 每 每个 该 此 这样 那样 如此 等等 之一 方面 时 后来 当时 ' +
    '研究 工作 问题 介绍 讲述 说明 告诉 关于 有关 请 一下'
  ).split(' '),
);

export function isChineseStopWord(w: string): boolean {
  return CHINESE_STOP_WORDS.has(w);
}

export interface Segment {
  text: string;
  start: number;
  end: number;
  wordLike: boolean;
}

export function segmentChinese(text: string): Segment[] {
  const out: Segment[] = [];
  for (const s of segmenter.segment(text)) {
    out.push({ text: s.segment, start: s.index, end: s.index + s.segment.length, wordLike: !!s.isWordLike });
  }
  return out;
}

/**
 * Chinese entity candidates of one sentence: maximal runs of adjacent Han words that are not
 * stop words ("居里" + "夫人" -> "居里夫人"), 2 to 12 characters; a year with its 年
 * ("1903年"); and Latin capitalised runs (names written in Latin script).
 */
export function chineseTerms(sentence: string): Run[] {
  const segs = segmentChinese(sentence);
  const runs: Run[] = [];
  let i = 0;
  while (i < segs.length) {
    const s = segs[i] as Segment;
    if (s.wordLike && /^\d{4}$/.test(s.text) && isYear(s.text)) {
      const next = segs[i + 1];
      const withYear = next?.text === '年';
      const end = withYear ? (next as Segment).end : s.end;
      runs.push({ text: sentence.slice(s.start, end), start: s.start, end, size: 1 });
      i += withYear ? 2 : 1;
      continue;
    }
    if (s.wordLike && hasHan(s.text) && !isChineseStopWord(s.text)) {
      let j = i;
      while (j + 1 < segs.length) {
        const n = segs[j + 1] as Segment;
        if (!n.wordLike || !hasHan(n.text) || isChineseStopWord(n.text)) break;
        j++;
      }
      const start = s.start;
      const end = (segs[j] as Segment).end;
      const text = sentence.slice(start, end);
      if (text.length >= 2 && text.length <= 12) runs.push({ text, start, end, size: j - i + 1 });
      i = j + 1;
      continue;
    }
    i++;
  }
  for (const r of capitalisedRuns(sentence, () => true)) runs.push(r);
  runs.sort((a, b) => a.start - b.start);
  return runs;
}
