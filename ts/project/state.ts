/**
 * The build state machine's persistent snapshot, info/state.json (docs/method.md §4.1), and its
 * transitions. Invariant: every stage before `current_state` has committed and
 * `current_state` has not (unless FINISHED). Transitions are pure functions returning a
 * new state; only commit.ts and writeState put one on disk.
 */

import { IndexConfigMismatchError, IndexFileError } from '../errors.js';
import { shellArg } from '../shell-arg.js';
import { writeFileAtomic } from './atomic.js';
import { INFO_FILES, resolveInProject } from './layout.js';
import { readTextIfExists } from './read-optional.js';

const STATE_FORMAT_VERSION = 1;

/** State values in run order (docs/method.md §3); the names are those of the original NodeRAG. */
export const BUILD_STATES = [
  'INIT',
  'Document pipeline',
  'Text pipeline',
  'Graph pipeline',
  'Attribute pipeline',
  'Embedding pipeline',
  'Summary pipeline',
  'Insert text pipeline',
  'HNSW pipeline',
  'FINISHED',
] as const;
type BuildStateName = (typeof BUILD_STATES)[number];

/** The stages that do work and commit (everything between INIT and FINISHED). */
export const STAGES = BUILD_STATES.slice(1, -1) as Exclude<BuildStateName, 'INIT' | 'FINISHED'>[];
export type StageName = Exclude<BuildStateName, 'INIT' | 'FINISHED'>;

const ERROR_TYPES = ['NO_ERROR', 'ERROR', 'INTERRUPTED'] as const;
type ErrorType = (typeof ERROR_TYPES)[number];

export interface EmbeddingIdentity {
  provider: string;
  model: string;
  dim: number;
  /** `embedding_config.document_prefix` the stored vectors were made with; absent = empty. */
  document_prefix?: string;
}

export interface BuildState {
  format_version: number;
  current_state: BuildStateName;
  error_type: ErrorType;
  error_message: string | null;
  is_incremental: boolean;
  generation: number;
  last_finished_generation: number;
  embedding: EmbeddingIdentity | null;
  updated_at: string;
}

/** ISO-8601 UTC to the second, as in the spec's example (`2025-01-01T12:00:00Z`). */
function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

export function stateIndex(name: BuildStateName): number {
  return BUILD_STATES.indexOf(name);
}

/** The state of a project that has never been built: nothing committed, generation 0. */
export function initialState(now = new Date()): BuildState {
  return {
    format_version: STATE_FORMAT_VERSION,
    current_state: 'INIT',
    error_type: 'NO_ERROR',
    error_message: null,
    is_incremental: false,
    generation: 0,
    last_finished_generation: 0,
    embedding: null,
    updated_at: isoSeconds(now),
  };
}

/** The index can be searched once a cycle has finished. */
export function isSearchable(state: BuildState): boolean {
  return state.last_finished_generation >= 1;
}

/** True while a cycle has started and not reached FINISHED. */
export function isCycleUnfinished(state: BuildState): boolean {
  return state.current_state !== 'INIT' && state.current_state !== 'FINISHED';
}

/**
 * True once the Document pipeline of the running cycle has committed: from then on the
 * cycle's document set is fixed and newly found files are queued (docs/method.md §3.1).
 */
export function isCycleDocumentSetFixed(state: BuildState): boolean {
  return isCycleUnfinished(state) && state.current_state !== 'Document pipeline';
}

/** Run-algorithm step 5: begin generation g + 1 at the Document pipeline. */
export function startCycle(state: BuildState, now = new Date()): BuildState {
  if (isCycleUnfinished(state)) {
    throw new Error(
      `cannot start a new cycle while generation ${state.generation} is at ${state.current_state}`,
    );
  }
  const generation = state.generation + 1;
  return {
    ...state,
    current_state: 'Document pipeline',
    error_type: 'NO_ERROR',
    error_message: null,
    generation,
    is_incremental: generation > 1,
    updated_at: isoSeconds(now),
  };
}

/**
 * The state a stage's commit writes: the next state, error cleared. The HNSW pipeline's
 * commit finishes the cycle.
 */
export function advanceState(state: BuildState, now = new Date()): BuildState {
  if (!isCycleUnfinished(state))
    throw new Error(`cannot advance from ${state.current_state}: no stage is running`);
  const next = BUILD_STATES[stateIndex(state.current_state) + 1]!;
  return {
    ...state,
    current_state: next,
    error_type: 'NO_ERROR',
    error_message: null,
    last_finished_generation: next === 'FINISHED' ? state.generation : state.last_finished_generation,
    updated_at: isoSeconds(now),
  };
}

/** Record a failed or interrupted stage; `current_state` stays so the next run resumes there. */
export function failState(
  state: BuildState,
  type: Exclude<ErrorType, 'NO_ERROR'>,
  message: string | null,
  now = new Date(),
): BuildState {
  return { ...state, error_type: type, error_message: message, updated_at: isoSeconds(now) };
}

/**
 * Move back to an earlier state of the same cycle (INIT does this when HNSW.bin, id_map or
 * hnsw_graph is unusable: the vector index is rebuilt from the stored vectors). From
 * FINISHED the cycle is reopened; `last_finished_generation` is kept.
 */
export function rewindState(state: BuildState, target: StageName, now = new Date()): BuildState {
  if (stateIndex(target) > stateIndex(state.current_state)) {
    throw new Error(`cannot rewind from ${state.current_state} forward to ${target}`);
  }
  return {
    ...state,
    current_state: target,
    error_type: 'NO_ERROR',
    error_message: null,
    updated_at: isoSeconds(now),
  };
}

/** Record the embedding provider on the first embedding call. */
export function withEmbedding(state: BuildState, embedding: EmbeddingIdentity, now = new Date()): BuildState {
  return { ...state, embedding: { ...embedding }, updated_at: isoSeconds(now) };
}

// ----------------------------------------------------------------------------- file format

const KEY_ORDER: (keyof BuildState)[] = [
  'format_version',
  'current_state',
  'error_type',
  'error_message',
  'is_incremental',
  'generation',
  'last_finished_generation',
  'embedding',
  'updated_at',
];

export function serializeState(state: BuildState): string {
  const ordered: Record<string, unknown> = {};
  for (const key of KEY_ORDER) ordered[key] = state[key];
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/**
 * How to rebuild from scratch without losing paid model replies (README "Build"); `folder`
 * when the message knows it. Deleting cache/ by hand would delete the response cache too.
 */
export function rebuildHint(folder = '<project folder>'): string {
  return `rebuild from scratch with \`noderag build -f ${shellArg(folder)} --rebuild\` (it keeps the model replies in cache/response_cache/)`;
}

/** Parse and validate the text of info/state.json; every problem names the key. */
export function parseState(text: string, label: string = INFO_FILES.state, root?: string): BuildState {
  const hint = rebuildHint(root);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new IndexFileError(
      'index_damaged',
      `${label} is not valid JSON (${(error as Error).message}); ${hint}`,
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new IndexFileError('index_damaged', `${label} must hold a JSON object; ${hint}`);
  }
  const o = raw as Record<string, unknown>;
  if ('Current_state' in o || 'Error_type' in o) {
    throw new IndexFileError(
      'index_format_unsupported',
      `${label} has the original NodeRAG's keys (Current_state, Error_type); this index was not written by noderag: ${hint}`,
    );
  }
  const version = o.format_version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new IndexFileError(
      'index_damaged',
      `${label}: format_version must be a positive integer, got ${JSON.stringify(version)}`,
    );
  }
  if (version !== STATE_FORMAT_VERSION) {
    throw new IndexFileError(
      'index_format_unsupported',
      `${label} has format_version ${version}, but this version of noderag reads only format_version ${STATE_FORMAT_VERSION}: upgrade noderag, or ${hint}`,
    );
  }
  const problems: string[] = [];
  const bad = (key: string, expected: string) =>
    problems.push(`${key}: expected ${expected}, got ${JSON.stringify(o[key]) ?? 'nothing'}`);
  const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

  if (!(BUILD_STATES as readonly unknown[]).includes(o.current_state))
    bad('current_state', `one of ${BUILD_STATES.join(', ')}`);
  if (!(ERROR_TYPES as readonly unknown[]).includes(o.error_type)) bad('error_type', ERROR_TYPES.join(', '));
  if (o.error_message !== null && typeof o.error_message !== 'string')
    bad('error_message', 'a string or null');
  if (typeof o.is_incremental !== 'boolean') bad('is_incremental', 'true or false');
  if (!isCount(o.generation)) bad('generation', 'an integer ≥ 0');
  if (!isCount(o.last_finished_generation)) bad('last_finished_generation', 'an integer ≥ 0');
  else if (isCount(o.generation) && o.last_finished_generation > o.generation) {
    bad('last_finished_generation', `at most generation (${o.generation})`);
  }
  const e = o.embedding as Record<string, unknown> | null | undefined;
  if (e !== null) {
    if (typeof e !== 'object' || e === undefined || Array.isArray(e)) bad('embedding', 'an object or null');
    else {
      if (typeof e.provider !== 'string' || e.provider === '')
        bad('embedding.provider', 'a non-empty string');
      if (typeof e.model !== 'string' || e.model === '') bad('embedding.model', 'a non-empty string');
      if (typeof e.dim !== 'number' || !Number.isInteger(e.dim) || e.dim < 1)
        bad('embedding.dim', 'a positive integer');
      if (e.document_prefix !== undefined && typeof e.document_prefix !== 'string')
        bad('embedding.document_prefix', 'a string');
    }
  }
  if (typeof o.updated_at !== 'string') bad('updated_at', 'an ISO-8601 string');
  if (problems.length > 0) {
    throw new IndexFileError('index_damaged', `${label} is invalid: ${problems.join('; ')}`);
  }
  return {
    format_version: version,
    current_state: o.current_state as BuildStateName,
    error_type: o.error_type as ErrorType,
    error_message: o.error_message as string | null,
    is_incremental: o.is_incremental as boolean,
    generation: o.generation as number,
    last_finished_generation: o.last_finished_generation as number,
    embedding: e
      ? {
          provider: e.provider as string,
          model: e.model as string,
          dim: e.dim as number,
          ...(typeof e.document_prefix === 'string' ? { document_prefix: e.document_prefix } : {}),
        }
      : null,
    updated_at: o.updated_at as string,
  };
}

/** info/state.json of a project, or null when the project was never built. */
export async function readState(root: string): Promise<BuildState | null> {
  const text = await readTextIfExists(resolveInProject(root, INFO_FILES.state));
  return text === null ? null : parseState(text, INFO_FILES.state, root);
}

/**
 * Replace info/state.json atomically. Stage commits carry the state inside COMMIT.json
 * instead; this is for status-only changes (error, interruption, a new cycle's start).
 */
export async function writeState(root: string, state: BuildState): Promise<void> {
  await writeFileAtomic(resolveInProject(root, INFO_FILES.state), serializeState(state));
}

/** Whether vectors made with `a` and `b` are the same (what a build refuses to mix). */
export function sameEmbedding(a: EmbeddingIdentity, b: EmbeddingIdentity): boolean {
  return (
    a.provider === b.provider &&
    a.model === b.model &&
    a.dim === b.dim &&
    (a.document_prefix ?? '') === (b.document_prefix ?? '')
  );
}

export function describeEmbedding(e: EmbeddingIdentity): string {
  const prefix = e.document_prefix ? `, document_prefix ${JSON.stringify(e.document_prefix)}` : '';
  return `${e.provider}/${e.model} (${e.dim}${prefix})`;
}

/** What differs between the recorded embedding and the configured one, named by config key. */
export function embeddingChange(was: EmbeddingIdentity, now: EmbeddingIdentity): string {
  const parts: string[] = [];
  if (was.provider !== now.provider || was.model !== now.model)
    parts.push(`embedding_config ${now.provider}/${now.model}`);
  if (was.dim !== now.dim) parts.push(`config.dim ${now.dim}`);
  if ((was.document_prefix ?? '') !== (now.document_prefix ?? ''))
    parts.push(`embedding_config.document_prefix ${JSON.stringify(now.document_prefix ?? '')}`);
  return parts.join(' and ');
}

/**
 * The index's vectors have the dimension they were built with (state.json): a config.dim
 * changed since is said as such, not as a damaged vector index.
 */
/**
 * The warning for an index whose vectors were made with another embedding than `wanted` (the
 * config's), or null. Questions would be embedded with another model than the stored
 * vectors: the results mean nothing, though nothing fails. (A changed dim is refused:
 * requireSameDim.)
 */
export function embeddingMismatchWarning(
  root: string,
  state: BuildState,
  wanted: EmbeddingIdentity,
): string | null {
  const e = state.embedding;
  if (!e || sameEmbedding(e, wanted) || e.dim !== wanted.dim) return null;
  return `the index in ${root} holds vectors made with ${describeEmbedding(e)}, but the config asks for ${embeddingChange(e, wanted)}: questions are embedded with another model than the stored vectors, so results are meaningless; set embedding_config back, or ${rebuildHint(root)} with the new embedding settings`;
}

export function requireSameDim(root: string, state: BuildState, dim: number): void {
  const built = state.embedding?.dim;
  if (built !== undefined && built !== dim) {
    throw new IndexConfigMismatchError(
      `the index in ${root} was built with config.dim ${built}, but config.dim is now ${dim}: set it back to ${built}, or ${rebuildHint(root)} with the new embedding settings`,
    );
  }
}
