/**
 * The naive RAG baseline of `noderag eval` and the quality benchmark: the text chunks of a
 * built index, ranked by exact (brute-force) distance between the question's embedding and
 * the chunk embeddings the build stored in text.parquet, so the baseline uses exactly the
 * same vectors as noderag. A context is either a token budget filled with whole chunks in
 * rank order, the last one cut at the budget (`fillBudget`), or the first k chunks (`topK`).
 * Contexts are formatted like noderag's (one `text` section), so token counts compare.
 */
import { IndexNotBuiltError } from '../errors.js';
import { TABLES } from '../index-io/tables.js';
import { type ContextItem, formatContext } from '../search/context.js';
import { countTokens, truncateToTokens } from '../text/index.js';
import { containsAnswer } from './answer-match.js';

export interface Chunk {
  id: string;
  text: string;
  /** Relative path of the document that first produced the chunk. */
  document: string;
  vector: Float32Array;
}

export interface IndexedChunks {
  chunks: Chunk[];
  /** Relative paths of every indexed document. */
  documents: string[];
}

/** The text chunks of the index in `folder` (and the indexed document paths). */
export async function loadChunks(folder: string, dim: number): Promise<IndexedChunks> {
  const docs = await TABLES.documents.load(folder);
  const pathOf = new Map(docs.map((d) => [d.docId, d.path]));
  const rows = await TABLES.text.load(folder, dim);
  const chunks = rows.map((r) => {
    if (!r.embedding) {
      throw new IndexNotBuiltError(
        `${TABLES.text.file}: chunk ${r.hashId} has no embedding; finish the build (noderag build) first`,
      );
    }
    return { id: r.hashId, text: r.context, document: pathOf.get(r.docId) ?? '', vector: r.embedding };
  });
  return { chunks, documents: docs.map((d) => d.path) };
}

/** Chunk indexes by ascending distance to `query` (`l2`: squared L2; `cosine`: 1 − cos), ties by id. */
export function rankChunks(chunks: readonly Chunk[], query: Float32Array, space: 'l2' | 'cosine'): number[] {
  let qNorm = 0;
  for (const v of query) qNorm += v * v;
  qNorm = Math.sqrt(qNorm) || 1;
  const dist = new Float64Array(chunks.length);
  chunks.forEach((c, i) => {
    let dot = 0;
    let l2 = 0;
    let cNorm = 0;
    const v = c.vector;
    for (let j = 0; j < v.length; j++) {
      const d = v[j]! - query[j]!;
      l2 += d * d;
      dot += v[j]! * query[j]!;
      cNorm += v[j]! * v[j]!;
    }
    dist[i] = space === 'l2' ? l2 : 1 - dot / (qNorm * (Math.sqrt(cNorm) || 1));
  });
  return chunks
    .map((_, i) => i)
    .sort((a, b) => dist[a]! - dist[b]! || (chunks[a]!.id < chunks[b]!.id ? -1 : 1));
}

export interface BaselineItem extends ContextItem {
  document: string;
  /** A chunk cut short at the budget. */
  partial: boolean;
}

function asItem(c: Chunk, text = c.text, partial = false): BaselineItem {
  return { id: c.id, type: 'text', text, document: c.document, partial };
}

export interface BaselineContext {
  context: string;
  items: BaselineItem[];
}

/** Whole chunks in rank order while they fit `budget` tokens; the next one cut to fill it. */
export function fillBudget(
  chunks: readonly Chunk[],
  ranking: readonly number[],
  budget: number,
): BaselineContext {
  const items: BaselineItem[] = [];
  let context = '';
  for (const i of ranking) {
    const c = chunks[i]!;
    const whole = formatContext([...items, asItem(c)]);
    if (countTokens(whole) <= budget) {
      items.push(asItem(c));
      context = whole;
      continue;
    }
    // Cut the chunk: shrink its token allowance until the whole context fits the budget.
    let allowance = budget - (context ? countTokens(context) : 0);
    while (allowance > 0) {
      const piece = truncateToTokens(c.text, allowance);
      const candidate = formatContext([...items, asItem(c, piece, true)]);
      if (piece.trim() && countTokens(candidate) <= budget) {
        items.push(asItem(c, piece, true));
        context = candidate;
        break;
      }
      allowance -= Math.max(1, countTokens(candidate) - budget);
    }
    break;
  }
  return { context, items };
}

/** The first `k` chunks of the ranking, whole. */
export function topK(chunks: readonly Chunk[], ranking: readonly number[], k: number): BaselineContext {
  const items = ranking.slice(0, k).map((i) => asItem(chunks[i]!));
  return { context: formatContext(items), items };
}

/**
 * Per question, the smallest budget (tokens, searched up to `max`) at which the naive
 * budget-fill context contains one of the gold answers, or Infinity. The fill at a larger
 * budget extends the one at a smaller budget, so "answer at budget B" is B ≥ this
 * threshold: any token count can then be priced without refilling.
 */
export function naiveAnswerThresholds(
  answers: readonly (readonly string[])[],
  chunks: readonly Chunk[],
  rankings: readonly (readonly number[])[],
  max = 8000,
): number[] {
  return rankings.map((ranking, n) => {
    const gold = answers[n]!;
    const has = (b: number) => {
      const context = fillBudget(chunks, ranking, b).context;
      return gold.some((a) => containsAnswer(context, a));
    };
    if (!has(max)) return Number.POSITIVE_INFINITY;
    let lo = 0; // no answer at lo (empty context)
    let hi = max; // answer at hi
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (has(mid)) hi = mid;
      else lo = mid;
    }
    return hi;
  });
}
