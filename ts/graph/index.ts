export {
  betweenness,
  type Communities,
  type Connection,
  connect,
  coreNumbers,
  type KMeansOptions,
  type KMeansResult,
  kmeans,
  type LeidenOptions,
  leiden,
  type PageRankResult,
  pagerank,
  type ShortestPath,
  shortestPath,
} from './algorithms.js';
export type { GraphEdges } from './edges.js';
export { PhraseMatcher, phraseTokens } from './phrase-matcher.js';
export {
  type FullScores,
  type PropagationOptions,
  SearchGraph,
  type SearchGraphInput,
  type Seeds,
  type TopNodes,
} from './search-graph.js';
