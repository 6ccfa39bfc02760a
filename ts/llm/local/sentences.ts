/**
 * Sentence splitting for the local provider (docs/method.md §7.7 uses the S cut points of §3.2):
 * a sentence ends after `.` `!` `?` `;` followed by whitespace, or after `。` `！` `？` `；` `…`,
 * with closing quotes and brackets kept on the sentence.
 *
 * Deterministic refinements over the bare rule, so units read like sentences:
 * - a paragraph break (a blank line) always ends a sentence, so a heading without a full
 *   stop is not glued to the paragraph after it; so does a line break before a Markdown
 *   heading or list item, or after a heading line;
 * - no cut after a known abbreviation (`Dr.`, `e.g.`, `Inc.`) or a single-letter initial
 *   (`J. K. Rowling`), nor at a full stop followed by a lowercase letter.
 */

const LATIN_END = new Set(['.', '!', '?', ';']);
const CJK_END = new Set(['。', '！', '？', '；', '…']);
const CLOSERS = new Set(['"', "'", '”', '’', ')', ']', '}', '»', '」', '』', '）', '】', '》', '〉']);

const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'jr',
  'sr',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'inc',
  'ltd',
  'co',
  'corp',
  'no',
  'mt',
  'ft',
  'gen',
  'gov',
  'sen',
  'rep',
  'rev',
  'fig',
  'approx',
  'dept',
  'est',
  'vol',
  'cf',
  'al',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'u.s',
  'u.k',
  'a.m',
  'p.m',
]);

/** A line feed or a character of LATIN_END / CJK_END: where `splitSentences` looks. */
const STOP_CANDIDATE = /[\n.!?;。！？；…]/g;

function isSpace(ch: string | undefined): boolean {
  return ch !== undefined && /\s/u.test(ch);
}

/** The word (letters and inner dots) that ends just before index `end` (the full stop). */
function wordBefore(text: string, end: number): string {
  let i = end;
  while (i > 0 && /[\p{L}.]/u.test(text[i - 1] as string)) i--;
  return text.slice(i, end);
}

function isAbbreviation(text: string, dot: number): boolean {
  const w = wordBefore(text, dot);
  if (w.length === 0) return false;
  if (/^\p{Lu}$/u.test(w)) return true; // an initial: "J."
  return ABBREVIATIONS.has(w.toLowerCase());
}

function blockStartAt(text: string, i: number): boolean {
  // A Markdown heading or list item starting the next line.
  return /^[ \t]*(#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s)/u.test(text.slice(i, i + 8));
}

/**
 * Splits `text` into trimmed, non-empty sentences, in order. Inner line breaks of a sentence
 * are kept as written.
 */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  const push = (end: number) => {
    const s = text.slice(start, end).trim();
    if (s) out.push(s);
    start = end;
  };
  const n = text.length;
  let i = 0;
  while (i < n) {
    // Straight to the next character that can end a sentence (the others only move i on).
    STOP_CANDIDATE.lastIndex = i;
    const next = STOP_CANDIDATE.exec(text);
    if (next === null) break;
    i = next.index;
    const ch = text[i] as string;
    if (ch === '\n') {
      // Paragraph break: a run of whitespace holding two or more LFs.
      let j = i;
      let lfs = 0;
      while (j < n && isSpace(text[j])) {
        if (text[j] === '\n') lfs++;
        j++;
      }
      const headingLine = /^\s*#{1,6}\s/u.test(text.slice(start, i));
      if (lfs >= 2 || headingLine || (j < n && blockStartAt(text, i + 1))) {
        push(i);
      }
      i = j;
      continue;
    }
    if (CJK_END.has(ch) || LATIN_END.has(ch)) {
      let j = i + 1;
      while (j < n && (CJK_END.has(text[j] as string) || LATIN_END.has(text[j] as string))) j++;
      while (j < n && CLOSERS.has(text[j] as string)) j++;
      if (CJK_END.has(ch)) {
        push(j);
        i = j;
        continue;
      }
      if (j >= n || isSpace(text[j])) {
        let k = j;
        while (k < n && isSpace(text[k])) k++;
        const next = text[k];
        // Only a full stop is ambiguous enough to need this ("approx. five").
        const lowerNext = ch === '.' && next !== undefined && /\p{Ll}/u.test(next);
        const abbreviation = ch === '.' && j === i + 1 && isAbbreviation(text, i);
        if (!abbreviation && !lowerNext) {
          push(j);
        }
      }
      i = j;
      continue;
    }
    i++;
  }
  STOP_CANDIDATE.lastIndex = 0;
  push(n);
  return out;
}

/** The first sentence of `text` (the whole trimmed text when it has no sentence end). */
export function firstSentence(text: string): string {
  return splitSentences(text)[0] ?? '';
}
