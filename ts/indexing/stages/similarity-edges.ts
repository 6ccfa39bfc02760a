/**
 * The similarity edges of the HNSW stage (docs/method.md §3.9): the layer-0 links of the vector
 * index between active labels, as undirected node pairs, each once, in the file order of
 * hnsw_graph.parquet (by source, then target, as strings).
 *
 * Why numbers: an index has about 20 links per vector (147k pairs at HotpotQA-100). A string
 * key per link to deduplicate, and then sorting the pairs by their two id strings, cost a
 * sync's HNSW stage more than inserting its new vectors. Here each label gets the rank of its
 * node id among the u distinct nodes in string order (one sort of the distinct ids), a pair is
 * the number lo·u + hi of its two ranks, and one numeric sort both orders the pairs as the table wants
 * them and puts duplicates side by side; the table's own sort then finds them in order.
 */
import type { IdMapRow, SimilarityEdge } from '../../index-io/tables.js';

/** Exact while n² < 2^53 (u ≤ n labels); beyond that (never in practice) the pairs are sorted as two numbers. */
const PACKED_MAX = 2 ** 26;

export function similarityEdges(
  idMap: readonly IdMapRow[],
  src: Uint32Array,
  dst: Uint32Array,
  /** Tests lower it to reach the unpacked path. */
  packedMax = PACKED_MAX,
): SimilarityEdge[] {
  const n = idMap.length;
  // Each distinct node once, in string order (`sort()` without a comparator compares UTF-16
  // code units, as `<` does, natively: a comparator called from JS for every comparison of
  // 112k labels took a tenth of the function at a 10 MB index). A label's rank is its node's
  // place; labels of one node share it; -1 when retired.
  const nodes = [...new Set(idMap.map((row) => row.node))].sort();
  const place = new Map(nodes.map((node, i) => [node, i]));
  const rank = new Int32Array(n).fill(-1);
  for (let label = 0; label < n; label++) {
    const row = idMap[label]!;
    if (!row.retired) rank[label] = place.get(row.node)!;
  }
  const u = nodes.length;
  const rankOf = (label: number) => (label < n ? rank[label]! : -1);
  // The rows are made as the pairs come out of the sort, with no pair array in between
  // (2.1 million pairs at a 10 MB index).
  const edges: SimilarityEdge[] = [];
  if (n <= packedMax) {
    const keys = new Float64Array(src.length);
    let k = 0;
    for (let i = 0; i < src.length; i++) {
      const ra = rankOf(src[i]!);
      const rb = rankOf(dst[i]!);
      if (ra < 0 || rb < 0 || ra === rb) continue;
      keys[k++] = ra < rb ? ra * u + rb : rb * u + ra;
    }
    const sorted = keys.subarray(0, k).sort();
    for (let i = 0; i < k; i++) {
      if (i > 0 && sorted[i] === sorted[i - 1]) continue;
      const l = Math.floor(sorted[i]! / u);
      edges.push({ source: nodes[l]!, target: nodes[sorted[i]! - l * u]! });
    }
  } else {
    const lo: number[] = [];
    const hi: number[] = [];
    for (let i = 0; i < src.length; i++) {
      const ra = rankOf(src[i]!);
      const rb = rankOf(dst[i]!);
      if (ra < 0 || rb < 0 || ra === rb) continue;
      lo.push(Math.min(ra, rb));
      hi.push(Math.max(ra, rb));
    }
    const idx = Array.from({ length: lo.length }, (_, i) => i).sort(
      (p, q) => lo[p]! - lo[q]! || hi[p]! - hi[q]!,
    );
    for (let j = 0; j < idx.length; j++) {
      const i = idx[j]!;
      const prev = idx[j - 1];
      if (prev !== undefined && lo[prev] === lo[i] && hi[prev] === hi[i]) continue;
      edges.push({ source: nodes[lo[i]!]!, target: nodes[hi[i]!]! });
    }
  }
  return edges;
}
