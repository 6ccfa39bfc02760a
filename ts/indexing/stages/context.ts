/**
 * What every stage receives from the run loop, and what it gives back. A stage reads only
 * committed data (through `index`), stages its outputs through `out`, edits `counters` (read
 * at the stage start, committed with its rows) and reports counts for info.log.
 */
import type { NodeConfig } from '../../config/node-config.js';
import type { IndexData } from '../../index-io/index-data.js';
import type { ModelProviders } from '../../llm/create-providers.js';
import type { Counters } from '../../model/types.js';
import type { BuildState, EmbeddingIdentity, StageName } from '../../project/state.js';
import type { DiscoveryPlan } from '../discover.js';
import type { DocumentHashes } from '../info-files.js';
import type { BuildLog, StageCounts } from '../log.js';
import type { StopSignal } from './interrupt.js';
import type { StageOutputs } from './outputs.js';
import type { StageProgress } from './progress.js';

export interface StageContext {
  root: string;
  config: NodeConfig;
  /** The persisted state; `current_state` is this stage. */
  state: BuildState;
  /** The generation being built. */
  g: number;
  counters: Counters;
  index: IndexData;
  providers: ModelProviders;
  log: BuildLog;
  progress: StageProgress;
  stop: StopSignal;
  out: StageOutputs;
  /** The discovery plan of this cycle (the Document pipeline's input). */
  plan: DiscoveryPlan;
  /** The committed path → hash map, as INIT read it. */
  hashes: DocumentHashes;
  /** `--allow-failures`: failed chunks do not fail the Text pipeline. */
  allowFailures: boolean;
}

export interface StageResult {
  counts: StageCounts;
  /** A short human summary for the terminal, e.g. "994 chunks, 0 failed". */
  summary: string;
  /** Set by the stage that first embeds (recorded in state.json with its commit). */
  embedding?: EmbeddingIdentity;
  /** Paths whose extraction failed this cycle (reported, retried on the next run). */
  skipped?: { path: string; reason: string }[];
  /** Input paths this cycle tried to index (Document pipeline); a follow-up cycle skips them. */
  attempted?: string[];
}

/** One cycle's changes to the document set and the chunks and nodes they removed. */
export interface CycleSync {
  added: string[];
  changed: string[];
  deleted: string[];
  renamed: { path: string; from: string }[];
  /** Ids of removed chunks, semantic units, entities and relationships. */
  removedChunks: string[];
  removedUnits: string[];
  removedEntities: string[];
  removedRelationships: string[];
  /**
   * Documents the cycle tried and could not index, with the reason (a file whose content is
   * at fault is then left out of later builds until it changes: ts/indexing/unindexable.ts).
   */
  skipped: { path: string; reason: string }[];
}

type StageRunner = (ctx: StageContext) => Promise<StageResult>;

export type StageTable = Readonly<Record<StageName, StageRunner>>;
