/**
 * INIT (docs/method.md §3.1): read the committed state, check the committed index files, and
 * discover the input documents. Produces everything the state tree and the run loop need;
 * writes nothing (staging recovery, step 2, runs before this), except that damaged
 * vector-index files are moved aside (`<name>.damaged`) to be rebuilt.
 */
import { rename } from 'node:fs/promises';
import { IndexFileError } from '../errors.js';
import {
  CHECKSUMS_FILE,
  checksumProblem,
  type FileChecksum,
  readChecksumsForCheck,
} from '../index-io/checksums.js';
import { isFile } from '../project/fs-probe.js';
import { CACHE_FILES, INFO_FILES, INPUT_DIR, resolveInProject } from '../project/layout.js';
import {
  type BuildState,
  initialState,
  readState,
  rebuildHint,
  rewindState,
  type StageName,
  stateIndex,
} from '../project/state.js';
import { shellArg } from '../shell-arg.js';
import { type DiscoveryPlan, type DocuType, discoverDocuments } from './discover.js';
import { NoDocumentsError } from './errors.js';
import { type DocumentHashes, readDocumentHashes } from './info-files.js';
import { type BuildOutlook, buildOutlook, formatNameList, MESSAGES, skippedSummary } from './tree.js';
import { readUnindexable } from './unindexable.js';

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

/** Why a committed file cannot be used, or null when it can. */
async function damage(
  abs: string,
  relative: string,
  recorded: ReadonlyMap<string, FileChecksum>,
  probe?: FileProbe,
): Promise<string | null> {
  const want = recorded.get(relative);
  const problem = await checksumProblem(abs, want);
  if (problem !== null || want) return problem;
  // No recorded checksum (an index of an older version): the probe's checks.
  if (probe && !(await probe(abs, relative))) return 'unreadable';
  return null;
}

export interface IndexCheck {
  /** The state to continue from: moved back to the HNSW pipeline when vector-index files are unusable. */
  state: BuildState;
  /** The vector-index files found unusable, each with why (they are rebuilt). */
  repaired: { file: string; reason: string }[];
}

/**
 * Check the committed index against the state: every file the state says was committed
 * must exist, be readable and, when its commit recorded a checksum (cache/checksums.json),
 * still have it. Unusable vector-index files (HNSW.bin, id_map, hnsw_graph) are re-derived
 * from the stored vectors: they are moved aside to `<name>.damaged` and the state goes back
 * to the HNSW pipeline. Any other unusable file is fatal, naming it and how to recover.
 */
export async function checkCommittedIndexFiles(
  root: string,
  state: BuildState,
  probe?: FileProbe,
): Promise<IndexCheck> {
  const recorded = await readChecksumsForCheck(root);
  const repaired: { file: string; reason: string }[] = [];
  // Every file a commit recorded is there with its bytes (commits only add or replace
  // files): the records a later stage reads back (graph_delta.json, element_members.json, …)
  // and the index counters would otherwise be taken as empty when missing, silently. The
  // graph snapshot is the exception: derived from the tables, checked when loaded and
  // written again by the next commit that finds it missing or stale.
  const files = new Set([...expectedIndexFiles(state), ...recorded.keys()]);
  files.delete(CACHE_FILES.searchGraph);
  for (const relative of files) {
    const abs = resolveInProject(root, relative);
    const reason = await damage(abs, relative, recorded, probe);
    if (reason === null) continue;
    if (REBUILDABLE_FILES.includes(relative)) {
      repaired.push({ file: relative, reason });
      continue;
    }
    throw new IndexFileError(
      'index_damaged',
      `index damaged: ${relative} is ${reason}; restore it or rebuild from scratch with \`noderag build --rebuild -f ${shellArg(root)}\` (it cannot be re-derived from the other index files; the rebuild serves every model reply already paid for from cache/response_cache/)`,
    );
  }
  if (repaired.length === 0 || stateIndex(state.current_state) <= stateIndex('HNSW pipeline')) {
    return { state, repaired: [] };
  }
  // Out of the way, so the HNSW pipeline neither trusts nor reads them: it rebuilds from
  // the vectors stored in the tables. Kept for inspection until the next damage.
  for (const { file } of repaired) {
    const abs = resolveInProject(root, file);
    if (await isFile(abs)) await rename(abs, `${abs}.damaged`);
  }
  return { state: rewindState(state, 'HNSW pipeline'), repaired };
}

/**
 * Check the committed index against the state. Returns the state to continue from: moved
 * back to the HNSW pipeline when only vector-index files are unusable. Any other missing,
 * unreadable or damaged file is fatal, naming it.
 */
export async function checkCommittedIndex(
  root: string,
  state: BuildState,
  probe?: FileProbe,
): Promise<BuildState> {
  return (await checkCommittedIndexFiles(root, state, probe)).state;
}

/**
 * Without info/state.json a build starts a first cycle: over committed tables it would mix
 * a new index into the old one. Refused, naming the way out.
 */
async function refuseOrphanIndex(root: string): Promise<void> {
  const committed = [CHECKSUMS_FILE, ...Object.values(STAGE_OUTPUTS).flat()];
  for (const relative of committed) {
    if (await isFile(resolveInProject(root, relative))) {
      throw new IndexFileError(
        'index_damaged',
        `index damaged: ${INFO_FILES.state} is missing, but cache/ holds an index (${relative}); restore it, or ${rebuildHint(root)}`,
      );
    }
  }
}

export interface InitResult {
  /** The state to continue from (persisted, initial, or rewound to the HNSW pipeline). */
  state: BuildState;
  /** True when `state` differs from info/state.json and must be written before work starts. */
  stateChanged: boolean;
  /** Vector-index files found damaged (moved aside; the HNSW pipeline rebuilds them). */
  repaired: { file: string; reason: string }[];
  hashes: DocumentHashes;
  plan: DiscoveryPlan;
  outlook: BuildOutlook;
}

/**
 * Run INIT. Throws NoDocumentsError on a first build with nothing to index and when every
 * indexed document was deleted and none is left or new, IndexFileError
 * for an unknown format_version or a damaged index.
 */
export async function runInit(
  root: string,
  options: { docuType: DocuType; probe?: FileProbe; followSymlinks?: boolean },
): Promise<InitResult> {
  const persisted = await readState(root);
  if (persisted === null) await refuseOrphanIndex(root);
  const check =
    persisted === null
      ? { state: initialState(), repaired: [] }
      : await checkCommittedIndexFiles(root, persisted, options.probe);
  const checked = check.state;
  const hashes = await readDocumentHashes(root);
  const plan = await discoverDocuments(resolveInProject(root, INPUT_DIR), options.docuType, hashes, {
    followSymlinks: options.followSymlinks === true,
    unindexable: await readUnindexable(root),
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
  const indexedPaths = Object.keys(hashes).length;
  if (
    outlook.startsCycle &&
    plan.cycle.length === 0 &&
    indexedPaths > 0 &&
    plan.deleted.length === indexedPaths
  ) {
    throw new NoDocumentsError(
      `${MESSAGES.allDeleted} (${formatNameList(plan.deleted)}); an index needs at least one document: put documents in input/ and run the build again. The index was left as it is.`,
    );
  }
  return {
    state: checked,
    stateChanged: persisted !== null && checked !== persisted,
    repaired: check.repaired,
    hashes,
    plan,
    outlook,
  };
}
