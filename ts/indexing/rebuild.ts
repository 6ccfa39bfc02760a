/**
 * `build --rebuild`: the index rebuilt from scratch while the response cache (every paid
 * model reply and embedding) stays where it is.
 *
 * The committed index — everything in cache/ except cache/response_cache/, and
 * info/state.json, indices.json, document_hash.json — is moved aside into
 * cache/.previous-index, the build runs on the emptied project (the response cache serves
 * every reply already paid for), and the previous index is deleted once the new one is
 * searchable. If the build fails, is interrupted or declined, the previous index is put back.
 *
 * Crash safety (kill -9 at any moment leaves the old or the new index usable once the next
 * build has started, which runs `recoverRebuild` first):
 *
 *   moving aside   entries go into `.previous-index.moving`, state.json last; the folder is
 *                  then renamed to `.previous-index` (the commit point)
 *                  → a crash before the rename: `.moving` exists, its entries are put back
 *   building       `.previous-index` exists
 *                  → the new state is searchable: the rebuild finished, drop the old index;
 *                    otherwise: delete the new files (state.json first) and put the old back
 *   putting back   `.previous-index` is renamed to `.moving` first, then restored as above
 *   dropping       `.previous-index` is renamed to `.previous-index.delete`, then removed
 *
 * Every step is a rename inside the project folder, so nothing is copied.
 */
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncDir } from '../project/atomic.js';
import { pathExists } from '../project/fs-probe.js';
import { CACHE_DIR, INFO_FILES, resolveInProject } from '../project/layout.js';
import { isSearchable, readState } from '../project/state.js';

/** Where the previous index waits while the rebuild runs (relative to the project root). */
export const PREVIOUS_INDEX_DIR = `${CACHE_DIR}/.previous-index`;
const MOVING_DIR = `${PREVIOUS_INDEX_DIR}.moving`;
const DELETE_DIR = `${PREVIOUS_INDEX_DIR}.delete`;

/** cache/ entries that are not the index: the response cache and this module's own folders. */
const KEPT_IN_CACHE = new Set([
  'response_cache',
  '.previous-index',
  '.previous-index.moving',
  '.previous-index.delete',
]);

/** The index files of info/; info.log and build.lock stay. state.json is handled last. */
const INFO_INDEX_FILES = [
  INFO_FILES.indices,
  INFO_FILES.documentHash,
  INFO_FILES.unindexable,
  INFO_FILES.cycleSync,
  INFO_FILES.buildSettings,
];

/** Index entries present in the project, relative, state.json last. */
async function indexEntries(root: string): Promise<string[]> {
  const entries: string[] = [];
  let names: string[] = [];
  try {
    names = await readdir(resolveInProject(root, CACHE_DIR));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  for (const name of names.sort()) if (!KEPT_IN_CACHE.has(name)) entries.push(`${CACHE_DIR}/${name}`);
  for (const rel of [...INFO_INDEX_FILES, INFO_FILES.state]) {
    if (await pathExists(resolveInProject(root, rel))) entries.push(rel);
  }
  return entries;
}

/** Relative paths of the files and folders kept in `dir` (an aside folder), state.json last. */
async function asideEntries(root: string, dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const top of ['cache', 'info']) {
    let names: string[];
    try {
      names = await readdir(resolveInProject(root, `${dir}/${top}`));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    for (const name of names.sort()) out.push(`${top}/${name}`);
  }
  const state = out.indexOf(INFO_FILES.state);
  if (state >= 0) out.push(...out.splice(state, 1));
  return out;
}

async function syncDirs(root: string, rels: readonly string[]): Promise<void> {
  for (const rel of new Set(rels)) {
    const dir = resolveInProject(root, rel);
    if (await pathExists(dir)) await fsyncDir(dir);
  }
}

/**
 * Moves the committed index aside. Returns false (and changes nothing) when there is no index
 * to move. Call under the build lock, after `recoverRebuild`.
 */
export async function moveIndexAside(root: string): Promise<boolean> {
  const entries = await indexEntries(root);
  if (entries.length === 0) return false;
  const moving = resolveInProject(root, MOVING_DIR);
  await mkdir(resolveInProject(root, `${MOVING_DIR}/cache`), { recursive: true });
  await mkdir(resolveInProject(root, `${MOVING_DIR}/info`), { recursive: true });
  for (const rel of entries)
    await rename(resolveInProject(root, rel), resolveInProject(root, `${MOVING_DIR}/${rel}`));
  await syncDirs(root, [`${MOVING_DIR}/cache`, `${MOVING_DIR}/info`, CACHE_DIR, 'info']);
  // The commit point: from here on the project is an empty one being built.
  await rename(moving, resolveInProject(root, PREVIOUS_INDEX_DIR));
  await syncDirs(root, [CACHE_DIR]);
  return true;
}

/** Puts back every entry of the `.moving` folder (none of them has a new counterpart), then removes it. */
async function restoreFromMoving(root: string): Promise<void> {
  for (const rel of await asideEntries(root, MOVING_DIR)) {
    const to = resolveInProject(root, rel);
    await mkdir(dirname(to), { recursive: true });
    // A new file at the same place would only be a leftover of the new build: the old one wins.
    await rm(to, { recursive: true, force: true });
    await rename(resolveInProject(root, `${MOVING_DIR}/${rel}`), to);
  }
  await syncDirs(root, [CACHE_DIR, 'info']);
  await rm(resolveInProject(root, MOVING_DIR), { recursive: true, force: true });
}

/** The new (partial) index is deleted, state.json first, and the previous one put back. */
async function restorePrevious(root: string): Promise<void> {
  const fresh = await indexEntries(root);
  const state = fresh.indexOf(INFO_FILES.state);
  if (state >= 0) fresh.unshift(...fresh.splice(state, 1));
  for (const rel of fresh) await rm(resolveInProject(root, rel), { recursive: true, force: true });
  await syncDirs(root, [CACHE_DIR, 'info']);
  await rename(resolveInProject(root, PREVIOUS_INDEX_DIR), resolveInProject(root, MOVING_DIR));
  await restoreFromMoving(root);
}

async function dropPrevious(root: string, from: string): Promise<void> {
  if (from !== DELETE_DIR) {
    await rename(resolveInProject(root, from), resolveInProject(root, DELETE_DIR));
    await syncDirs(root, [CACHE_DIR]);
  }
  await rm(resolveInProject(root, DELETE_DIR), { recursive: true, force: true });
}

export type RebuildOutcome = 'none' | 'restored' | 'dropped';

/**
 * Ends a rebuild left by this run or by a crash: the previous index is dropped when the new
 * one is searchable, put back otherwise. 'none' when no rebuild was pending.
 */
export async function recoverRebuild(root: string): Promise<RebuildOutcome> {
  if (await pathExists(resolveInProject(root, DELETE_DIR))) {
    await dropPrevious(root, DELETE_DIR);
    return 'dropped';
  }
  if (await pathExists(resolveInProject(root, MOVING_DIR))) {
    await restoreFromMoving(root);
    return 'restored';
  }
  if (!(await pathExists(resolveInProject(root, PREVIOUS_INDEX_DIR)))) return 'none';
  let searchable = false;
  try {
    const state = await readState(root);
    searchable = state !== null && isSearchable(state);
  } catch {
    // An unreadable new state is no finished rebuild.
  }
  if (searchable) {
    await dropPrevious(root, PREVIOUS_INDEX_DIR);
    return 'dropped';
  }
  await restorePrevious(root);
  return 'restored';
}

/** The rebuild folders present (none outside a rebuild or its recovery). */
export async function rebuildLeftovers(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const rel of [PREVIOUS_INDEX_DIR, MOVING_DIR, DELETE_DIR]) {
    if (await pathExists(resolveInProject(root, rel))) out.push(rel);
  }
  return out;
}
