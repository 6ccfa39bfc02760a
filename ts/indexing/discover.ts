/**
 * INIT discovery (docs/method.md §3.1): walk input/, keep supported files, hash their raw bytes
 * and classify each against info/document_hash.json. Classification is a pure function so
 * every case (rename, copy, change, deletion) is tested without touching the disk.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';

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

/** A supported file under input/. `path` is relative to input/ with `/` separators. */
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
}

function skippedName(name: string): boolean {
  return name.startsWith('.') || name.startsWith('~$');
}

function describeIoError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'cannot read: file not found (broken symbolic link?)';
  if (e.code === 'EACCES' || e.code === 'EPERM') return 'cannot read: permission denied';
  return `cannot read: ${e.code ?? e.message}`;
}

/**
 * All supported files below `inputDir`, sorted by relative path in code-point order.
 * Names starting with `.` or `~$` are skipped; symlinked directories are not descended
 * (that also rules out cycles); symlinked files are kept. Folders that cannot be listed
 * are returned as `unreadable` instead of failing the walk.
 */
export async function listInputFiles(
  inputDir: string,
  docuType: DocuType,
): Promise<{ files: InputFile[]; unreadable: UnreadableFile[] }> {
  const allowed = allowedExtensions(docuType);
  const files: InputFile[] = [];
  const unreadable: UnreadableFile[] = [];

  const walk = async (absDir: string, relDir: string, isRoot: boolean): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(absDir, { withFileTypes: true });
    } catch (error) {
      if (isRoot) throw error;
      unreadable.push({
        path: `${relDir}/`,
        reason: describeIoError(error).replace('cannot read', 'cannot list folder'),
      });
      return;
    }
    for (const entry of entries) {
      if (skippedName(entry.name)) continue;
      const abs = join(absDir, entry.name);
      const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      if (entry.isDirectory()) {
        await walk(abs, rel, false);
        continue;
      }
      if (!allowed.has(extname(entry.name).toLowerCase())) continue;
      if (entry.isFile()) {
        files.push({ path: rel, absPath: abs });
      } else if (entry.isSymbolicLink()) {
        try {
          const target = await stat(abs);
          if (target.isFile()) files.push({ path: rel, absPath: abs });
          // A link to a folder is not descended; a link to a socket or FIFO is ignored.
        } catch {
          // A broken link with a supported name: report it rather than hide it.
          files.push({ path: rel, absPath: abs });
        }
      }
      // Sockets, FIFOs and devices are never documents (reading a FIFO would block).
    }
  };

  try {
    await walk(inputDir, '', true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`${inputDir} does not exist; create it and put the documents to index there`);
    }
    throw error;
  }
  files.sort((a, b) => compareCodePoints(a.path, b.path));
  unreadable.sort((a, b) => compareCodePoints(a.path, b.path));
  return { files, unreadable };
}

/** Lowercase hex SHA-256 of a file's raw bytes, streamed. */
export function sha256File(absPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const stream = createReadStream(absPath);
    stream.on('error', reject);
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('end', () => resolve(hash.digest('hex')));
  });
}

export function sha256Bytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Hash every file (a few at a time); files that cannot be read go to `unreadable`. */
export async function hashFiles(
  files: readonly InputFile[],
  concurrency = 4,
): Promise<{ hashed: HashedFile[]; unreadable: UnreadableFile[] }> {
  const results: (HashedFile | UnreadableFile)[] = new Array(files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      const file = files[i]!;
      try {
        results[i] = { ...file, hash: await sha256File(file.absPath) };
      } catch (error) {
        results[i] = { path: file.path, reason: describeIoError(error) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
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
  /** Path known, hash differs: reported; the old content stays indexed. */
  changed: string[];
  /** Path known, file gone and not renamed: reported; the old content stays indexed. */
  deleted: string[];
  /** The documents of the next cycle: new, duplicate and renamed paths, sorted. */
  cycle: string[];
}

/**
 * Classify the files found against the indexed map (path → hash).
 *
 * Choices where §3.1 leaves room (documented in ARCHITECTURE.md):
 * - Renamed wins over duplicate: content that is still indexed elsewhere but also belonged
 *   to a vanished path is that path moved, so no "deleted" warning is raised for it.
 * - Several new paths with the content of one vanished path: the first in path order is the
 *   rename, the rest are duplicates of it. Several vanished paths with one content are
 *   consumed in path order.
 * - Two new paths with the same unindexed content are both `new`; their chunks meet by id.
 */
export function classifyDocuments(
  found: readonly { path: string; hash: string }[],
  indexed: Readonly<Record<string, string>>,
): Classification {
  const sorted = [...found].sort((a, b) => compareCodePoints(a.path, b.path));
  const present = new Set(sorted.map((f) => f.path));
  const knownPaths = Object.keys(indexed).sort(compareCodePoints);

  // Content hash → indexed paths still present / vanished, each in path order.
  const presentByHash = new Map<string, string[]>();
  const vanishedByHash = new Map<string, string[]>();
  for (const path of knownPaths) {
    const hash = indexed[path]!;
    const map = present.has(path) ? presentByHash : vanishedByHash;
    const list = map.get(hash);
    if (list) list.push(path);
    else map.set(hash, [path]);
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
      else out.changed.push(file.path);
      continue;
    }
    const vanished = vanishedByHash.get(file.hash);
    if (vanished && vanished.length > 0) {
      const from = vanished.shift()!;
      out.renamed.push({ path: file.path, from });
      // Later copies of this content are duplicates of the renamed path.
      const holders = presentByHash.get(file.hash);
      if (holders) holders.push(file.path);
      else presentByHash.set(file.hash, [file.path]);
      out.cycle.push(file.path);
      continue;
    }
    const holders = presentByHash.get(file.hash);
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
}

/** Walk, hash and classify `inputDir` against the indexed map. */
export async function discoverDocuments(
  inputDir: string,
  docuType: DocuType,
  indexed: Readonly<Record<string, string>>,
): Promise<DiscoveryPlan> {
  const listing = await listInputFiles(inputDir, docuType);
  const { hashed, unreadable } = await hashFiles(listing.files);
  const allUnreadable = [...listing.unreadable, ...unreadable].sort((a, b) =>
    compareCodePoints(a.path, b.path),
  );
  // An indexed file that exists but cannot be read right now is neither changed nor
  // deleted: it is only reported as unreadable.
  const readableKnown: Record<string, string> = {};
  const unreadablePaths = new Set(unreadable.map((u) => u.path));
  for (const [path, hash] of Object.entries(indexed)) {
    if (!unreadablePaths.has(path)) readableKnown[path] = hash;
  }
  const classes = classifyDocuments(hashed, readableKnown);
  return {
    ...classes,
    found: listing.files.length,
    files: hashed,
    unreadable: allUnreadable,
  };
}
