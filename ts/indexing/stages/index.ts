/** The stage of each state value (docs/method.md §3), in run order. */
import { attributeStage } from './attribute.js';
import type { StageTable } from './context.js';
import { documentStage } from './document.js';
import { embeddingStage } from './embedding.js';
import { graphStage } from './graph.js';
import { hnswStage } from './hnsw.js';
import { insertTextStage } from './insert-text.js';
import { summaryStage } from './summary.js';
import { textStage } from './text.js';

export const STAGE_RUNNERS: StageTable = {
  'Document pipeline': documentStage,
  'Text pipeline': textStage,
  'Graph pipeline': graphStage,
  'Attribute pipeline': attributeStage,
  'Embedding pipeline': embeddingStage,
  'Summary pipeline': summaryStage,
  'Insert text pipeline': insertTextStage,
  'HNSW pipeline': hnswStage,
};
