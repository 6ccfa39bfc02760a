/**
 * The last finished generation, kept whole while a build cycle replaces it (docs/method.md
 * §6.1). A cycle commits stage by stage: between its first commit and FINISHED, the search
 * files in cache/ are a mix of the two generations. A search process started in that window
 * (a server started while a build runs, a worker that restarts, or a build killed mid-sync)
 * reads this set instead, so it serves exactly what the last finished build produced.
 *
 * The set is `cache/finished/`: hard links to the search files of the generation, made when
 * a cycle starts (the build replaces every file by renaming a new one over it, so a link
 * keeps the old content at no cost in disk space until the cycle ends; a file system without
 * hard links gets copies). `generation.json`, written last, names the generation and the
 * files; a set without it, or of another generation, is not used. A search file the
 * generation did not have (an optional one, or one a damaged index lacks) is absent from the
 * set too: read from cache/, it would be the cycle's. The set is removed when the cycle
 * finishes, and by any later build that finds the index finished.
 */
import { copyFile, link, mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { IndexNotBuiltError } from '../errors.js';
import { fsyncDir, fsyncFile, writeFileSynced } from '../project/atomic.js';
import { isFile } from '../project/fs-probe.js';
import { CACHE_DIR, CACHE_FILES, resolveInProject } from '../project/layout.js';
import { CHECKSUMS_FILE } from './checksums.js';
import { GRAPH_DELTA_FILE } from './graph-delta.js';
import { SEARCH_TABLE_FILES } from './search-tables.js';

export const FINISHED_DIR = `${CACHE_DIR}/finished`;
const MARKER = 'generation.json';
/** Where a set is assembled before it is renamed into place. */
const ASSEMBLY_DIR = `${CACHE_DIR}/.finished.tmp`;

/** Every file search reads from cache/ (all directly in cache/, so their base names differ). */
const KEPT_FILES: readonly string[] = [
  ...SEARCH_TABLE_FILES,
  CACHE_FILES.hnswBin,
  CACHE_FILES.searchGraph,
  CHECKSUMS_FILE,
  GRAPH_DELTA_FILE,
];

interface Marker {
  generation: number;
  files: string[];
}

/**
 * Keeps the search files of finished generation `generation`, which cache/ holds now (a
 * cycle is about to start), in cache/finished/, replacing any earlier set. Returns null, or
 * why no set could be kept: then the cycle runs without one (a search process started
 * before it finishes reads its commits as they land, as for an index an older version
 * built), which is no reason to refuse the build. An earlier set that cannot be removed (a
 * file a reader holds open, on some systems) is of an older generation, so it is never used.
 */
export async function keepFinishedGeneration(root: string, generation: number): Promise<string | null> {
  const assembly = resolveInProject(root, ASSEMBLY_DIR);
  try {
    await rm(assembly, { recursive: true, force: true });
    await mkdir(assembly, { recursive: true });
    const files: string[] = [];
    for (const relative of KEPT_FILES) {
      const from = resolveInProject(root, relative);
      if (!(await isFile(from))) continue;
      const to = join(assembly, basename(relative));
      try {
        await link(from, to);
      } catch {
        // A copy is new data: flushed before the marker vouches for it.
        await copyFile(from, to);
        await fsyncFile(to);
      }
      files.push(relative);
    }
    await writeFileSynced(
      join(assembly, MARKER),
      `${JSON.stringify({ generation, files } satisfies Marker)}\n`,
    );
    await fsyncDir(assembly);
    const dir = resolveInProject(root, FINISHED_DIR);
    await rm(dir, { recursive: true, force: true });
    await rename(assembly, dir);
    await fsyncDir(resolveInProject(root, CACHE_DIR));
    return null;
  } catch (e) {
    await rm(assembly, { recursive: true, force: true }).catch(() => {});
    return (e as Error).message;
  }
}

/** Removes the kept set and any set left half-assembled by a crash. */
export async function discardFinishedGeneration(root: string): Promise<void> {
  await rm(resolveInProject(root, FINISHED_DIR), { recursive: true, force: true });
  await rm(resolveInProject(root, ASSEMBLY_DIR), { recursive: true, force: true });
}

/** A kept set: where its files are, and what identifies it. */
export interface KeptGeneration {
  /**
   * Project-relative path → absolute path, for every search file: one the generation did not
   * have maps to a path that does not exist.
   */
  files: Map<string, string>;
  /**
   * Its marker file (a new set is a new file). The files of one set never change, so a read
   * of them stays valid while this does.
   */
  identity: string;
}

/** The kept set of `generation`, or null when no complete set of that generation is kept. */
export async function keptGeneration(root: string, generation: number): Promise<KeptGeneration | null> {
  const dir = resolveInProject(root, FINISHED_DIR);
  let text: string;
  let identity: string;
  try {
    // One handle: the identity is that of the marker read.
    const handle = await open(join(dir, MARKER), 'r');
    try {
      const s = await handle.stat();
      identity = `${generation}:${s.dev}:${s.ino}:${s.mtimeMs}`;
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    // Not "no set": read as none, a search would serve the cycle's partial commits.
    throw new IndexNotBuiltError(
      `cannot read ${FINISHED_DIR}/${MARKER} (the finished generation kept while a build runs): ${(e as Error).message}`,
      { cause: e },
    );
  }
  let marker: Marker;
  try {
    marker = JSON.parse(text) as Marker;
  } catch {
    return null; // written whole before the set is renamed into place: not a set of ours
  }
  if (marker?.generation !== generation || !Array.isArray(marker.files)) return null;
  for (const relative of marker.files) {
    if (typeof relative !== 'string' || !KEPT_FILES.includes(relative)) return null;
  }
  return {
    files: new Map(KEPT_FILES.map((relative) => [relative, join(dir, basename(relative))])),
    identity,
  };
}

/** Where the kept files of `generation` are (`KeptGeneration.files`), or null when none are kept. */
export async function finishedGenerationFiles(
  root: string,
  generation: number,
): Promise<Map<string, string> | null> {
  return (await keptGeneration(root, generation))?.files ?? null;
}
