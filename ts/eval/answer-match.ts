/**
 * Gold-answer matching for retrieval quality, after the HotpotQA / SQuAD evaluation scripts'
 * `normalize_answer`: lower-case, punctuation removed, the articles a / an / the removed,
 * whitespace collapsed. A context "contains" the answer when the normalised answer occurs
 * in the normalised context as a whole-token sequence (so "no" does not match "not").
 */

const PUNCTUATION =
  /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~\u2018\u2019\u201c\u201d\u2013\u2014\u3001\u3002\u300a-\u300f\uff01-\uff0f\uff1a-\uff1f]/g;

/** Scripts written without spaces between words (Chinese, Japanese): no token boundaries. */
const UNSEGMENTED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

function normalizeAnswer(s: string): string {
  return s
    .toLowerCase()
    .replace(PUNCTUATION, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether `context` contains `answer` after normalisation, on token boundaries. */
export function containsAnswer(context: string, answer: string): boolean {
  const a = normalizeAnswer(answer);
  if (a === '') return false;
  const c = normalizeAnswer(context);
  // In an unsegmented script a word has no spaces around it: "林若兰" in "林若兰是天文学家".
  if (UNSEGMENTED.test(a)) return c.includes(a);
  return ` ${c} `.includes(` ${a} `);
}

/**
 * Whether a gold answer can be found at all: one that is only articles and punctuation
 * ("The", "A.") normalises to nothing, and `containsAnswer` never finds it.
 */
export function isMatchable(answer: string): boolean {
  return normalizeAnswer(answer) !== '';
}

/** Yes/no answers (HotpotQA comparison questions): a string match says nothing about them. */
export function isYesNo(answer: string): boolean {
  const a = normalizeAnswer(answer);
  return a === 'yes' || a === 'no';
}
