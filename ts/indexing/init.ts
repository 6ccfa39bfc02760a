/**
 * INIT (docs/method.md §3.1): read the committed state, check the committed index files, and
 * discover the input documents. Produces everything the state tree and the run loop need;
 * writes nothing (staging recovery, step 2, runs before this).
 */
import { stat } from 'node:fs/promises';
import { IndexFileError } from '../errors.js';
import { CACHE_FILES, INPUT_DIR, resolveInProject } from '../project/layout.js';
import {
  type BuildState,
  initialState,
  readState,
  rewindState,
  type StageName,
  stateIndex,
} from '../project/state.js';
import { type DiscoveryPlan, type DocuType, discoverDocuments } from './discover.js';
import { NoDocumentsError } from './errors.js';
import { type DocumentHashes, readDocumentHashes } from './info-files.js';
import { type BuildOutlook, buildOutlook, formatNameList, MESSAGES, skippedSummary } from './tree.js';

/**
 * Files each stage's commit creates (or replaces). Assumes every stage writes each of its
 * tables even when empty, so a completed stage always leaves them behind.
 */
export const STAGE_OUTPUTS: Readonly<Record<StageName, readonly string[]>> = {
  'Document pipeline': [CACHE_FILES.documents, CACHE_FILES.text],
  'Text pipeline': [CACHE_FILES.textDecomposition],
  'Graph pipeline': [
    CACHE_FILES.units,
    CACHE_FILES.entities,
    CACHE_FILES.relationships,
    CACHE_FILES.graphNodes,
    CACHE_FILES.graphEdges,
  ],
  'Attribute pipeline': [CACHE_FILES.attributes],
  'Embedding pipeline': [],
  'Summary pipeline': [CACHE_FILES.elements, CACHE_FILES.titles],
  'Insert text pipeline': [],
  'HNSW pipeline': [CACHE_FILES.hnswBin, CACHE_FILES.idMap, CACHE_FILES.hnswGraph],
};

/** The vector-index files: when unusable they are rebuilt from the stored vectors, never fatal. */
export const REBUILDABLE_FILES: readonly string[] = STAGE_OUTPUTS['HNSW pipeline'];

/** Files that must exist for a state: outputs of every stage committed in any generation. */
export function expectedIndexFiles(state: BuildState): string[] {
  const files: string[] = [];
  for (const [stage, outputs] of Object.entries(STAGE_OUTPUTS) as [StageName, readonly string[]][]) {
    // After a finished cycle every stage has committed at least once; otherwise only
    // those before the current state have.
    const committed =
      state.last_finished_generation >= 1 || stateIndex(stage) < stateIndex(state.current_state);
    if (committed) files.push(...outputs);
  }
  return files;
}

/** Optional deeper check of one file (e.g. the native parquet footer / HNSW.bin header check). */
export type FileProbe = (absPath: string, relative: string) => Promise<boolean>;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Check the committed index against the state. Returns the state to continue from: moved
 * back to the HNSW pipeline when only vector-index files are unusable. Any other missing or
 * unreadable file is fatal, naming it.
 */
export async function checkCommittedIndex(
  root: string,
  state: BuildState,
  probe?: FileProbe,
): Promise<BuildState> {
  let rebuildVectors = false;
  for (const relative of expectedIndexFiles(state)) {
    const abs = resolveInProject(root, relative);
    const usable = (await isFile(abs)) && (probe ? await probe(abs, relative) : true);
    if (usable) continue;
    if (REBUILDABLE_FILES.includes(relative)) {
      rebuildVectors = true;
      continue;
    }
    const what = (await isFile(abs)) ? 'unreadable' : 'missing';
    throw new IndexFileError(
      'index_damaged',
      `index damaged: ${relative} is ${what}; restore it or rebuild from scratch`,
    );
  }
  if (rebuildVectors && stateIndex(state.current_state) > stateIndex('HNSW pipeline')) {
    return rewindState(state, 'HNSW pipeline');
  }
  return state;
}

export interface InitResult {
  /** The state to continue from (persisted, initial, or rewound to the HNSW pipeline). */
  state: BuildState;
  /** True when `state` differs from info/state.json and must be written before work starts. */
  stateChanged: boolean;
  hashes: DocumentHashes;
  plan: DiscoveryPlan;
  outlook: BuildOutlook;
}

/**
 * Run INIT. Throws NoDocumentsError on a first build with nothing to index, IndexFileError
 * for an unknown format_version or a damaged index.
 */
export async function runInit(
  root: string,
  options: { docuType: DocuType; probe?: FileProbe; followSymlinks?: boolean },
): Promise<InitResult> {
  const persisted = await readState(root);
  const checked =
    persisted === null ? initialState() : await checkCommittedIndex(root, persisted, options.probe);
  const hashes = await readDocumentHashes(root);
  const plan = await discoverDocuments(resolveInProject(root, INPUT_DIR), options.docuType, hashes, {
    followSymlinks: options.followSymlinks === true,
  });
  const outlook = buildOutlook(checked, plan);
  if (checked.current_state === 'INIT' && !outlook.hasWork) {
    // The state tree is not printed for this error, so say here what was found instead.
    const notes: string[] = [];
    if (plan.unreadable.length > 0) {
      notes.push(`${plan.unreadable.length} unreadable: ${plan.unreadable.map((u) => u.path).join(', ')}`);
    }
    if (plan.skipped.length > 0) {
      notes.push(
        `skipped ${skippedSummary(plan.skipped)}: ${formatNameList(plan.skipped.map((e) => `${e.path} (${e.reason})`))}`,
      );
    }
    throw new NoDocumentsError(
      notes.length === 0 ? MESSAGES.noDocuments : `${MESSAGES.noDocuments} (${notes.join('; ')})`,
    );
  }
  return { state: checked, stateChanged: persisted !== null && checked !== persisted, hashes, plan, outlook };
}
