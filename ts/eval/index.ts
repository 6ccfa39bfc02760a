/**
 * Retrieval evaluation (`noderag eval`, bench/quality.ts): questions with gold answers and
 * supporting evidence, scored on the contexts of a built index and of the naive top-k
 * baseline at the same tokens with the same embeddings.
 */
export { containsAnswer, isMatchable, isYesNo } from './answer-match.js';
export {
  type ConfigResult,
  type EvalConfig,
  type EvalRun,
  type EvaluateOptions,
  evaluate,
} from './evaluate.js';
export {
  type BaselineContext,
  type BaselineItem,
  type Chunk,
  fillBudget,
  type IndexedChunks,
  loadChunks,
  naiveAnswerThresholds,
  rankChunks,
  topK,
} from './naive.js';
export { type EvalQuestion, parseQuestions, QuestionsFileError } from './questions.js';
export { type EvalReportJson, evalReportJson, formatEvalReport } from './report.js';
export {
  resolveSupporting,
  type Scored,
  type ScoredItem,
  type Summary,
  type SupportTarget,
  scoreContext,
  summarise,
} from './score.js';
export {
  describeOverrides,
  parseSetting,
  parseSettings,
  SEARCH_TIME_KEYS,
  type SearchOverrides,
  type SearchTimeKey,
  SettingError,
  withSearchSettings,
} from './settings.js';
