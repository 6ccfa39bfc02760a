/**
 * Gold-answer matching for retrieval quality, after the HotpotQA / SQuAD evaluation scripts'
 * `normalize_answer`: lower-case, punctuation removed, the articles a / an / the removed,
 * whitespace collapsed. A context "contains" the answer when the normalised answer occurs
 * in the normalised context as a whole-token sequence (so "no" does not match "not").
 *
 * Punctuation is tried both ways: deleted, as SQuAD does ("3,000" matches "3000"), and as a
 * space, since deleting it joins a context's words ("Okafor's" became "okafors", "1921–1922"
 * "19211922", and "Okafor" or "1921" were not found). Both sides are NFC-normalised first, so
 * a composed and a decomposed "Kraków" are the same.
 */

/** Every Unicode punctuation mark and symbol (SQuAD's `string.punctuation` and beyond: « » … ¿ ’). */
const PUNCTUATION = /[\p{P}\p{S}]/gu;

/** Scripts written without spaces between words (Chinese, Japanese): no token boundaries. */
const UNSEGMENTED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

function normalizeAnswer(s: string, punctuation: '' | ' ' = ''): string {
  return s
    .normalize('NFC')
    .toLowerCase()
    .replace(PUNCTUATION, punctuation)
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether `context` contains `answer` after normalisation, on token boundaries. */
export function containsAnswer(context: string, answer: string): boolean {
  for (const punctuation of ['', ' '] as const) {
    const a = normalizeAnswer(answer, punctuation);
    if (a === '') continue;
    const c = normalizeAnswer(context, punctuation);
    // In an unsegmented script a word has no spaces around it: "林若兰" in "林若兰是天文学家".
    if (UNSEGMENTED.test(a) ? c.includes(a) : ` ${c} `.includes(` ${a} `)) return true;
  }
  return false;
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
