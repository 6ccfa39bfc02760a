export {
  exactSearch,
  type LayerZeroEdges,
  type LoadOptions,
  VectorIndex,
  type VectorIndexFileInfo,
  type VectorIndexParams,
  type VectorSearchResult,
  type VectorSpace,
} from './vector-index.js';
