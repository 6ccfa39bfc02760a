/**
 * The naive RAG baseline of the quality benchmark: the text chunks of a built index, ranked by
 * exact (brute-force) distance between the question's embedding and the chunk embeddings the
 * build stored in text.parquet, so the baseline uses exactly the same vectors as noderag.
 */
import { join } from 'node:path';
import { TableReader } from '../../ts/index-io/columns.js';
import { readTableFile } from '../../ts/index-io/parquet.js';
import {
  DOCUMENT_COLUMNS,
  documentsFromTable,
  textColumns,
  textFromTable,
} from '../../ts/index-io/tables.js';

export interface Chunk {
  id: string;
  text: string;
  /** Relative path of the document that first produced the chunk. */
  document: string;
  vector: Float32Array;
}

export async function loadChunks(folder: string, dim: number): Promise<Chunk[]> {
  const cache = join(folder, 'cache');
  const docs = documentsFromTable(
    new TableReader(
      'documents.parquet',
      await readTableFile(join(cache, 'documents.parquet'), DOCUMENT_COLUMNS),
    ),
  );
  const pathOf = new Map(docs.map((d) => [d.docId, d.path]));
  const rows = textFromTable(
    new TableReader('text.parquet', await readTableFile(join(cache, 'text.parquet'), textColumns(dim))),
  );
  return rows.map((r) => {
    if (!r.embedding)
      throw new Error(`text.parquet: chunk ${r.hashId} has no embedding (index not finished?)`);
    return { id: r.hashId, text: r.context, document: pathOf.get(r.docId) ?? '', vector: r.embedding };
  });
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
