export { CONTEXT_SECTION_ORDER, type ContextSection, formatContext } from './context.js';
export type { AnswerEvent } from './engine-types.js';
export { LoadedIndex, type LoadTimings } from './loaded-index.js';
export {
  type AnswerQuestionOptions,
  NodeSearch,
  type NodeSearchOptions,
  type QuestionOptions,
  type SearchProviders,
} from './node-search.js';
export type { SearchAnswer, SearchRetrieval } from './results.js';
export {
  type QueryInputs,
  type Retrieval,
  type RetrievedItem,
  retrieve,
  type SearchParams,
  type StageTimings,
  searchParamsFrom,
} from './retrieve.js';
export {
  buildCitations,
  buildSources,
  type Citation,
  citedContext,
  citedNumbers,
  type Source,
} from './sources.js';
