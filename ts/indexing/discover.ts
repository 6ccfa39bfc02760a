/**
 * INIT discovery (docs/method.md §3.1): walk input/, keep supported files, hash their raw bytes
 * and classify each against info/document_hash.json. Classification is a pure function so
 * every case (rename, copy, change, deletion) is tested without touching the disk.
 */

import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative } from 'node:path';
import { NodeRagError } from '../errors.js';
import { pathExists } from '../project/fs-probe.js';
import { documentFormat } from './extract.js';
import type { UnindexableEntry } from './unindexable.js';

export const DOCU_TYPES = ['mixed', 'txt', 'md', 'doc', 'docx', 'pdf', 'html'] as const;
export type DocuType = (typeof DOCU_TYPES)[number];

const MIXED_EXTENSIONS = ['.txt', '.md', '.doc', '.docx', '.pdf', '.html', '.htm'];

/** Lower-case extensions (with the dot) that `docu_type` admits. */
export function allowedExtensions(docuType: DocuType): ReadonlySet<string> {
  if (docuType === 'mixed') return new Set(MIXED_EXTENSIONS);
  if (docuType === 'html') return new Set(['.html', '.htm']);
  if (!(DOCU_TYPES as readonly string[]).includes(docuType)) {
    throw new TypeError(
      `config.docu_type: expected one of ${DOCU_TYPES.join(', ')}, got ${JSON.stringify(docuType)}`,
    );
  }
  return new Set([`.${docuType}`]);
}

/**
 * Code-point order. JS `<` compares UTF-16 code units, which puts U+E000..U+FFFF after
 * astral characters; remapping the unit at the first difference restores code-point order
 * (the same order Rust's `str::cmp` gives, so both sides sort paths alike).
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rankUnit(x) - rankUnit(y);
  }
  return a.length - b.length;
}

function rankUnit(u: number): number {
  if (u >= 0xd800 && u <= 0xdfff) return u + 0x2000;
  if (u >= 0xe000) return u - 0x800;
  return u;
}

/**
 * A supported file under input/. `path` is relative to input/ with `/` separators;
 * `absPath` is the file to read: the entry itself, or for a symbolic link the target that
 * discovery checked (so what is read is what was allowed).
 */
export interface InputFile {
  path: string;
  absPath: string;
}

export interface HashedFile extends InputFile {
  /** Lowercase hex SHA-256 of the raw bytes. */
  hash: string;
}

/** A supported file (or a folder) that could not be listed or read during discovery. */
export interface UnreadableFile {
  path: string;
  reason: string;
  /**
   * The cause lasts until the user acts (a broken symbolic link, a link loop, a file gone
   * between listing and reading): an indexed file here is deleted from the index. Without
   * it (permission denied, an I/O error, a folder that cannot be listed) the file may be
   * readable again next time and keeps its rows.
   */
  lasting?: boolean;
}

/** Why an entry of input/ is not a document at all (as opposed to unreadable). */
export type SkipKind = 'hidden' | 'unsupported' | 'outside' | 'folder-link' | 'special';

/** An entry of input/ that discovery leaves out on purpose; shown in the state tree. */
export interface SkippedEntry {
  /** Relative to input/, `/` separated; folders end with `/`. */
  path: string;
  kind: SkipKind;
  reason: string;
}

/** How each kind is counted in the state tree ("2 hidden, 1 unsupported type"). */
export const SKIP_KIND_LABELS: Readonly<Record<SkipKind, string>> = {
  hidden: 'hidden',
  unsupported: 'unsupported type',
  outside: 'symbolic link leaving input/',
  'folder-link': 'symbolic link to a folder',
  special: 'not a regular file',
};

export interface DiscoverOptions {
  /** Index symbolic links whose target is outside input/ (config.follow_symlinks; default false). */
  followSymlinks?: boolean;
}

function hiddenReason(name: string): string | null {
  if (name.startsWith('.')) return 'hidden';
  if (name.startsWith('~$')) return 'Office lock file';
  return null;
}

function describeIoError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'cannot read: file not found (broken symbolic link?)';
  if (e.code === 'EACCES' || e.code === 'EPERM') return 'cannot read: permission denied';
  if (e.code === 'ELOOP') return 'cannot read: became a symbolic link after discovery';
  if (e.code === 'ENOTREG') return 'cannot read: not a regular file';
  return `cannot read: ${e.code ?? e.message}`;
}

/** A listed file that could not be read; one gone since the listing is gone for good. */
function unreadableFile(path: string, error: unknown): UnreadableFile {
  const reason = describeIoError(error);
  return (error as NodeJS.ErrnoException).code === 'ENOENT'
    ? { path, reason, lasting: true }
    : { path, reason };
}

function unsupportedReason(name: string, docuType: DocuType): string {
  const ext = extname(name).toLowerCase();
  if (docuType !== 'mixed' && MIXED_EXTENSIONS.includes(ext))
    return `${ext} files are not indexed with config.docu_type ${docuType}`;
  return ext === '' ? 'unsupported type (no extension)' : `unsupported type ${ext}`;
}

/** True when `target` is `dir` or inside it (both absolute, symbolic links resolved). */
function isInside(dir: string, target: string): boolean {
  const rel = relative(dir, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * All supported files below `inputDir`, sorted by relative path in code-point order.
 *
 * Left out and returned in `skipped` with the reason: names starting with `.` or `~$`,
 * files of a type `docu_type` does not admit, symbolic links to folders (never descended,
 * which also rules out cycles), symbolic links to files outside input/ (unless
 * `followSymlinks`), sockets, FIFOs and devices. A symbolic link to a file inside input/ is
 * kept, read through its resolved target. Folders that cannot be listed are returned as
 * `unreadable` instead of failing the walk.
 */
export async function listInputFiles(
  inputDir: string,
  docuType: DocuType,
  options: DiscoverOptions = {},
): Promise<{ files: InputFile[]; unreadable: UnreadableFile[]; skipped: SkippedEntry[] }> {
  const allowed = allowedExtensions(docuType);
  const files: InputFile[] = [];
  const unreadable: UnreadableFile[] = [];
  const skipped: SkippedEntry[] = [];
  let realInput: string | null = null;

  const walk = async (absDir: string, relDir: string, isRoot: boolean): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(absDir, { withFileTypes: true });
      if (isRoot) realInput = await realpath(absDir);
    } catch (error) {
      if (isRoot) throw error;
      unreadable.push({
        path: `${relDir}/`,
        reason: describeIoError(error).replace('cannot read', 'cannot list folder'),
      });
      return;
    }
    for (const entry of entries) {
      const abs = join(absDir, entry.name);
      const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      // A name that is not UTF-8 comes back with U+FFFD in place of its bad bytes, a name no
      // file has: it could never be opened, and would be retried on every build as missing.
      if (entry.name.includes('\uFFFD') && !(await pathExists(abs, { followLinks: false }))) {
        unreadable.push({
          path: entry.isDirectory() ? `${rel}/` : rel,
          reason: 'its name is not valid UTF-8 (shown with �); rename it',
        });
        continue;
      }
      const hidden = hiddenReason(entry.name);
      if (hidden) {
        skipped.push({ path: entry.isDirectory() ? `${rel}/` : rel, kind: 'hidden', reason: hidden });
        continue;
      }
      if (entry.isDirectory()) {
        await walk(abs, rel, false);
        continue;
      }
      const supported = allowed.has(extname(entry.name).toLowerCase());
      if (entry.isFile()) {
        if (supported) files.push({ path: rel, absPath: abs });
        else
          skipped.push({ path: rel, kind: 'unsupported', reason: unsupportedReason(entry.name, docuType) });
      } else if (entry.isSymbolicLink()) {
        await classifyLink(abs, rel, entry.name, supported);
      } else {
        // Sockets, FIFOs and devices are never documents (reading a FIFO would block).
        skipped.push({ path: rel, kind: 'special', reason: 'not a regular file' });
      }
    }
  };

  const classifyLink = async (abs: string, rel: string, name: string, supported: boolean): Promise<void> => {
    let target: string;
    let isDir: boolean;
    let isFile: boolean;
    try {
      target = await realpath(abs);
      const st = await stat(target);
      isDir = st.isDirectory();
      isFile = st.isFile();
    } catch (error) {
      // A broken link with a supported name: reported rather than hidden.
      const loop = (error as NodeJS.ErrnoException).code === 'ELOOP';
      if (supported)
        unreadable.push({
          path: rel,
          reason: loop ? 'cannot read: symbolic link loop' : 'cannot read: broken symbolic link',
          lasting: true,
        });
      else skipped.push({ path: rel, kind: 'unsupported', reason: unsupportedReason(name, docuType) });
      return;
    }
    if (isDir) {
      skipped.push({
        path: `${rel}/`,
        kind: 'folder-link',
        reason: 'symbolic link to a folder (not followed)',
      });
      return;
    }
    if (!isFile) {
      skipped.push({
        path: rel,
        kind: 'special',
        reason: 'symbolic link to something that is not a regular file',
      });
      return;
    }
    if (!supported) {
      skipped.push({ path: rel, kind: 'unsupported', reason: unsupportedReason(name, docuType) });
      return;
    }
    if (realInput !== null && !isInside(realInput, target) && options.followSymlinks !== true) {
      skipped.push({
        path: rel,
        kind: 'outside',
        reason: `symbolic link to ${target}, outside input/ (set config.follow_symlinks: true to index it)`,
      });
      return;
    }
    files.push({ path: rel, absPath: target });
  };

  try {
    await walk(inputDir, '', true);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new NodeRagError(
        'no_input_folder',
        `${inputDir} does not exist; create it and put the documents to index there`,
      );
    }
    if (code === 'ENOTDIR') {
      throw new NodeRagError(
        'no_input_folder',
        `${inputDir} is not a folder; the documents to index go in a folder named input`,
      );
    }
    throw error;
  }
  files.sort((a, b) => compareCodePoints(a.path, b.path));
  unreadable.sort((a, b) => compareCodePoints(a.path, b.path));
  skipped.sort((a, b) => compareCodePoints(a.path, b.path));
  return { files, unreadable, skipped };
}

/**
 * Read flags for documents: never follow a symbolic link at the last path component.
 * Discovery hands over resolved targets for the links it allowed, so a file replaced by a
 * link after discovery fails with ELOOP instead of being read through the link.
 */
export const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;

/** Lowercase hex SHA-256 of a file's raw bytes, streamed (never through a symbolic link). */
export async function sha256File(absPath: string): Promise<string> {
  const handle = await open(absPath, READ_NO_FOLLOW);
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const stream = handle.createReadStream();
    stream.on('error', reject);
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('end', () => resolve(hash.digest('hex')));
  });
}

export function sha256Bytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Files up to this size are read synchronously (hashed, and extracted by the Document stage):
 * one open, fstat, read and close each on the main thread instead of a read stream or a
 * `readFile` through the thread pool. For the small files of a typical input/ that is what
 * costs: 994 files of HotpotQA-100 took 65–120 ms CPU streamed and 10–20 ms read
 * synchronously, at every INIT and again at the end of each cycle (the follow-up
 * discovery). Larger files are streamed, so one read never blocks the event loop for long.
 */
const SYNC_READ_MAX_BYTES = 1 << 20;
/** Synchronous reads yield to the event loop after this much work (a server's build). */
const SYNC_SLICE_MS = 10;

/**
 * A function to await between synchronous reads: it lets the event loop run once at least
 * SYNC_SLICE_MS have passed since it last did, and returns at once otherwise.
 */
export function eventLoopYielder(): () => Promise<void> | undefined {
  let slice = performance.now();
  return () => {
    if (performance.now() - slice <= SYNC_SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        slice = performance.now();
        resolve();
      }),
    );
  };
}

/**
 * The bytes of a small regular file read synchronously, or null when it is larger than
 * SYNC_READ_MAX_BYTES (read it asynchronously instead). Opened without following a link,
 * and without blocking (a FIFO swapped in after discovery would otherwise block the open
 * until a writer came); anything but a regular file is refused.
 */
export function readSmallFileSync(absPath: string): Buffer | null {
  const fd = openSync(absPath, READ_NO_FOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTREG' });
    if (st.size > SYNC_READ_MAX_BYTES) return null;
    // Read to the end, not st.size bytes: a file that grows meanwhile is taken as read.
    let buffer = Buffer.allocUnsafe(Math.max(st.size, 1) + 1);
    let used = 0;
    for (;;) {
      if (used === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)]);
      const n = readSync(fd, buffer, used, buffer.length - used, null);
      if (n === 0) break;
      used += n;
    }
    return buffer.subarray(0, used);
  } finally {
    closeSync(fd);
  }
}

/** The hash of a small regular file (`readSmallFileSync`), or null when it is larger. */
function sha256SmallFileSync(absPath: string): string | null {
  const bytes = readSmallFileSync(absPath);
  return bytes === null ? null : sha256Bytes(bytes);
}

/**
 * Hash every file (small ones synchronously, larger ones streamed a few at a time); files
 * that cannot be read go to `unreadable`.
 */
export async function hashFiles(
  files: readonly InputFile[],
  concurrency = 4,
): Promise<{ hashed: HashedFile[]; unreadable: UnreadableFile[] }> {
  const results: (HashedFile | UnreadableFile)[] = new Array(files.length);
  const large: number[] = [];
  const yieldNow = eventLoopYielder();
  for (let i = 0; i < files.length; i++) {
    const file = files[i]!;
    try {
      const hash = sha256SmallFileSync(file.absPath);
      if (hash === null) large.push(i);
      else results[i] = { ...file, hash };
    } catch (error) {
      results[i] = unreadableFile(file.path, error);
    }
    await yieldNow();
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < large.length) {
      const i = large[next++]!;
      const file = files[i]!;
      try {
        results[i] = { ...file, hash: await sha256File(file.absPath) };
      } catch (error) {
        results[i] = unreadableFile(file.path, error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, large.length) }, worker));
  const hashed: HashedFile[] = [];
  const unreadable: UnreadableFile[] = [];
  for (const r of results) {
    if ('hash' in r) hashed.push(r);
    else unreadable.push(r);
  }
  return { hashed, unreadable };
}

/** The classes of §3.1; every list is sorted by path in code-point order. */
export interface Classification {
  /** Path known, same hash. */
  indexed: string[];
  /** Path unknown, content not indexed. */
  new: string[];
  /** Path unknown, content indexed under a path that still exists (`of`). */
  duplicate: { path: string; of: string }[];
  /** Path unknown, content equal to that of a vanished indexed path (`from`). */
  renamed: { path: string; from: string }[];
  /** Path known, hash differs: the old version is removed and the new one indexed. */
  changed: string[];
  /** Path known, file gone and not renamed: removed from the index. */
  deleted: string[];
  /** The documents of the next cycle: new, duplicate, renamed and changed paths, sorted. */
  cycle: string[];
}

/** What makes two files the same document: the loader their extension picks, and their bytes. */
function contentKey(path: string, hash: string): string {
  return `${documentFormat(path) ?? extname(path).toLowerCase()}:${hash}`;
}

/**
 * Classify the files found against the indexed map (path → hash).
 *
 * Choices where §3.1 leaves room (docs/method.md §3.1 states them too):
 * - Renamed wins over duplicate: content that is still indexed elsewhere but also belonged
 *   to a vanished path is that path moved, so no "deleted" warning is raised for it.
 * - Several new paths with the content of one vanished path: the first in path order is the
 *   rename, the rest are duplicates of it. Several vanished paths with one content are
 *   consumed in path order.
 * - Two new paths with the same unindexed content are both `new`; their chunks meet by id.
 * - "Same content" is the same bytes read by the same loader (`contentKey`): a copy or rename
 *   under an extension of another format is new (and the vanished path deleted).
 */
export function classifyDocuments(
  found: readonly { path: string; hash: string }[],
  indexed: Readonly<Record<string, string>>,
): Classification {
  const sorted = [...found].sort((a, b) => compareCodePoints(a.path, b.path));
  const present = new Set(sorted.map((f) => f.path));
  const knownPaths = Object.keys(indexed).sort(compareCodePoints);

  // Content (format and hash) → indexed paths still present / vanished, each in path order.
  // The format is part of it: the same bytes under another extension are read by another
  // loader (an HTML file renamed .txt keeps its tags), so they are a new document.
  const presentByHash = new Map<string, string[]>();
  const vanishedByHash = new Map<string, string[]>();
  for (const path of knownPaths) {
    const key = contentKey(path, indexed[path]!);
    const map = present.has(path) ? presentByHash : vanishedByHash;
    const list = map.get(key);
    if (list) list.push(path);
    else map.set(key, [path]);
  }

  const out: Classification = {
    indexed: [],
    new: [],
    duplicate: [],
    renamed: [],
    changed: [],
    deleted: [],
    cycle: [],
  };
  for (const file of sorted) {
    const knownHash = Object.hasOwn(indexed, file.path) ? indexed[file.path] : undefined;
    if (knownHash !== undefined) {
      if (knownHash === file.hash) out.indexed.push(file.path);
      else {
        out.changed.push(file.path);
        out.cycle.push(file.path);
      }
      continue;
    }
    const key = contentKey(file.path, file.hash);
    const vanished = vanishedByHash.get(key);
    if (vanished && vanished.length > 0) {
      const from = vanished.shift()!;
      out.renamed.push({ path: file.path, from });
      // Later copies of this content are duplicates of the renamed path.
      const holders = presentByHash.get(key);
      if (holders) holders.push(file.path);
      else presentByHash.set(key, [file.path]);
      out.cycle.push(file.path);
      continue;
    }
    const holders = presentByHash.get(key);
    if (holders && holders.length > 0) {
      out.duplicate.push({ path: file.path, of: holders[0]! });
      out.cycle.push(file.path);
      continue;
    }
    out.new.push(file.path);
    out.cycle.push(file.path);
  }
  for (const list of vanishedByHash.values()) out.deleted.push(...list);
  out.deleted.sort(compareCodePoints);
  return out;
}

/** The plan INIT builds (in memory): what is on disk and what the next cycle indexes. */
export interface DiscoveryPlan extends Classification {
  /** Supported files seen, readable or not. */
  found: number;
  /** Readable files with their hashes, sorted by path. */
  files: HashedFile[];
  /** Files (or folders) that could not be read; skipped and retried on the next run. */
  unreadable: UnreadableFile[];
  /**
   * Files whose very content an earlier cycle could not index (info/unindexable.json), left
   * out of the classification until they change, sorted by path.
   */
  unindexable: (UnreadableFile & { hash: string })[];
  /** Entries left out on purpose (hidden, unsupported type, links leaving input/, …). */
  skipped: SkippedEntry[];
}

export interface DiscoverDocumentsOptions extends DiscoverOptions {
  /** Contents earlier cycles could not index, by path (ts/indexing/unindexable.ts). */
  unindexable?: ReadonlyMap<string, UnindexableEntry>;
}

/**
 * The indexed files to classify: all but those that cannot be read right now (permission
 * denied, an I/O error, a folder on their path that cannot be listed), which are neither
 * changed nor deleted, only reported, and read again next time. One that is no document any
 * more (a broken link, a link refused, a type no longer admitted, a folder replaced by a link)
 * is classified as usual, so deleted: its text must not stay searchable, and the index
 * equals a clean build of the folder. Folders end with `/` and cover every path below them.
 */
export function readableNow(
  indexed: Readonly<Record<string, string>>,
  unreadable: readonly UnreadableFile[],
): Record<string, string> {
  const transient = unreadable.filter((u) => u.lasting !== true).map((u) => u.path);
  const files = new Set(transient.filter((p) => !p.endsWith('/')));
  const folders = transient.filter((p) => p.endsWith('/'));
  const out: Record<string, string> = {};
  for (const [path, hash] of Object.entries(indexed)) {
    if (files.has(path) || folders.some((folder) => path.startsWith(folder))) continue;
    out[path] = hash;
  }
  return out;
}

/** Walk, hash and classify `inputDir` against the indexed map. */
export async function discoverDocuments(
  inputDir: string,
  docuType: DocuType,
  indexed: Readonly<Record<string, string>>,
  options: DiscoverDocumentsOptions = {},
): Promise<DiscoveryPlan> {
  const listing = await listInputFiles(inputDir, docuType, options);
  const { hashed, unreadable } = await hashFiles(listing.files);
  // A file still holding the content an earlier cycle failed on would fail again: it is
  // reported, not indexed (an indexed path is never in the record; the check is cheap).
  const failed = options.unindexable ?? new Map<string, UnindexableEntry>();
  const unindexable: DiscoveryPlan['unindexable'] = [];
  const candidates: HashedFile[] = [];
  for (const file of hashed) {
    const entry = failed.get(file.path);
    if (entry !== undefined && entry.hash === file.hash && !Object.hasOwn(indexed, file.path)) {
      unindexable.push({ path: file.path, hash: file.hash, reason: entry.reason });
    } else candidates.push(file);
  }
  const allUnreadable = [...listing.unreadable, ...unreadable].sort((a, b) =>
    compareCodePoints(a.path, b.path),
  );
  const classes = classifyDocuments(candidates, readableNow(indexed, allUnreadable));
  return {
    ...classes,
    // Folders that cannot be listed are not files; broken links with a document's name are.
    found: listing.files.length + listing.unreadable.filter((u) => !u.path.endsWith('/')).length,
    files: hashed,
    unreadable: allUnreadable,
    unindexable,
    skipped: listing.skipped,
  };
}
