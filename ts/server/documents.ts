/**
 * Documents over HTTP on the search server (issue 16 item 6), and the document listing the
 * web UI's GET /api/files shares:
 * GET /documents: the files of input/ with their status against the last build (from the
 *   build's own discovery and info/document_hash.json): indexed, new, changed, renamed,
 *   not-indexable (with the reason: content a build could not index, left out until it
 *   changes, info/unindexable.json), and deleted-pending for indexed files no longer in
 *   input/ (the next build removes them);
 *   with the build's state (info/state.json) and whether a build started over HTTP runs.
 * POST /documents[?overwrite=1]: a multipart upload (field `file`) into input/ (./upload.ts:
 *   streamed, size limit on the bytes read, no symbolic link followed, names checked, all or
 *   nothing).
 * DELETE /documents/{path}: removes that file from input/; the next build syncs the index.
 */
import { lstat, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Context, Hono } from 'hono';
import { NodeConfig } from '../config/index.js';
import { allowedExtensions, type DocuType, discoverDocuments } from '../indexing/discover.js';
import { readDocumentHashes } from '../indexing/info-files.js';
import { readUnindexable } from '../indexing/unindexable.js';
import { fsyncDir } from '../project/atomic.js';
import { INPUT_DIR } from '../project/layout.js';
import { readState } from '../project/state.js';
import { fileNameProblem, nameProblem } from './file-names.js';
import { HttpError, nodeBindings } from './http.js';
import { receiveUpload } from './upload.js';

export type DocumentStatus = 'indexed' | 'new' | 'changed' | 'renamed' | 'not-indexable';

export interface DocumentEntry {
  /** Relative to input/, `/` separated. */
  path: string;
  size: number;
  status: DocumentStatus;
  /** Why a `not-indexable` file was left out (its content is as it was when a build failed on it). */
  reason?: string;
}

export interface DocumentListing {
  files: DocumentEntry[];
  /** Indexed documents no longer in input/. */
  deleted: string[];
  unreadable: string[];
  /** Extensions (with the dot) the config's docu_type admits. */
  accepted: string[];
}

/** The documents of input/ and their status against the last build, as the build sees them. */
export async function listDocuments(root: string, config: NodeConfig): Promise<DocumentListing> {
  const type = config.config.docu_type as DocuType;
  const plan = await discoverDocuments(join(root, INPUT_DIR), type, await readDocumentHashes(root), {
    followSymlinks: config.config.follow_symlinks,
    unindexable: await readUnindexable(root),
  });
  const status = new Map<string, DocumentStatus>();
  const reasons = new Map(plan.unindexable.map((u) => [u.path, u.reason]));
  for (const p of reasons.keys()) status.set(p, 'not-indexable');
  for (const p of plan.indexed) status.set(p, 'indexed');
  for (const p of plan.new) status.set(p, 'new');
  for (const p of plan.changed) status.set(p, 'changed');
  for (const d of plan.duplicate) status.set(d.path, 'new');
  for (const r of plan.renamed) status.set(r.path, 'renamed');
  // A file deleted since discovery read it is left out (a DELETE or a sync tool at work),
  // rather than failing the whole listing.
  const sizes = await Promise.all(plan.files.map((f) => sizeIfPresent(f.absPath)));
  const files: DocumentEntry[] = [];
  plan.files.forEach((f, i) => {
    const size = sizes[i];
    if (size === undefined) return;
    files.push({
      path: f.path,
      size,
      status: status.get(f.path) ?? 'new',
      ...(reasons.has(f.path) ? { reason: reasons.get(f.path) } : {}),
    });
  });
  return {
    files,
    deleted: plan.deleted,
    unreadable: plan.unreadable.map((u) => u.path),
    accepted: [...allowedExtensions(type)],
  };
}

async function sizeIfPresent(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * Removes `relPath` (relative to input/) from input/. Every segment must be a plain name
 * (./file-names.ts), the file an indexable type, and every folder on the way a real folder:
 * a symbolic link on the path is refused, so nothing outside input/ is ever removed. The
 * last entry is unlinked itself (a symbolic link there is removed, not its target).
 */
export async function removeDocument(inputDir: string, relPath: string, allowed: ReadonlySet<string>) {
  const segments = relPath.split('/');
  const name = segments[segments.length - 1]!;
  const problem =
    segments.slice(0, -1).reduce<string | null>((p, s) => p ?? nameProblem(s), null) ??
    fileNameProblem(name, allowed);
  if (problem) throw new HttpError(400, 'invalid_path', `DELETE /documents/{path}: ${problem}`);
  let dir = inputDir;
  for (const s of segments.slice(0, -1)) {
    dir = join(dir, s);
    const entry = await lstat(dir).catch(() => null);
    if (entry === null) throw notFound(relPath);
    if (!entry.isDirectory()) {
      throw new HttpError(400, 'invalid_path', `"${relPath}": "${s}" is not a folder of input/`);
    }
  }
  const target = join(dir, name);
  const entry = await lstat(target).catch(() => null);
  if (entry === null) throw notFound(relPath);
  if (entry.isDirectory()) throw new HttpError(400, 'invalid_path', `"${relPath}" is a folder`);
  try {
    await unlink(target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(relPath);
    throw e;
  }
  await fsyncDir(dirname(target));
}

/** The request-target as sent (under Node), else the request URL's path (app.request in tests). */
function requestTarget(c: Context): string {
  return nodeBindings(c).incoming?.url ?? new URL(c.req.url).pathname;
}

function notFound(relPath: string): HttpError {
  return new HttpError(404, 'document_not_found', `"${relPath}" is not in input/`);
}

export interface DocumentRouteDeps {
  /** Absolute project folder. */
  folder: string;
  /** Largest accepted upload, per file and per request. */
  maxUploadBytes: number;
  /** Whether a build started over HTTP runs (in this server, any worker). */
  building: () => boolean;
}

export function documentRoutes(deps: DocumentRouteDeps): Hono {
  const root = deps.folder;
  const inputDir = join(root, INPUT_DIR);
  // The config as saved now: docu_type decides what a document is.
  const config = () => NodeConfig.fromMainFolder(root);
  return new Hono()
    .get('/documents', async (c) => {
      const listing = await listDocuments(root, config());
      const state = await readState(root);
      return c.json({
        // What the statuses are against: the last finished generation, and the build now.
        build: {
          running: deps.building(),
          state: state?.current_state ?? null,
          generation: state?.last_finished_generation ?? 0,
        },
        documents: [
          ...listing.files,
          ...listing.deleted.map((path) => ({ path, size: null, status: 'deleted-pending' })),
        ],
        unreadable: listing.unreadable,
        accepted: listing.accepted,
        maxUploadBytes: deps.maxUploadBytes,
      });
    })
    .post('/documents', async (c) => {
      const written = await receiveUpload(c, {
        inputDir,
        allowed: allowedExtensions(config().config.docu_type as DocuType),
        maxBytes: deps.maxUploadBytes,
        overwrite: c.req.query('overwrite') === '1',
      });
      return c.json({ written }, 201);
    })
    .delete('/documents/*', async (c) => {
      // The path as the client sent it: a parsed URL has already resolved `..` and `%2e%2e`
      // segments, so `a/../b.txt` reached the checks as `b.txt` and deleted that file.
      const target = requestTarget(c).split('?')[0]!;
      const at = target.indexOf('/documents/');
      // Hono's `/documents/*` matches `/documents` too: that path takes no DELETE.
      if (at < 0 || target.length === at + '/documents/'.length) {
        throw new HttpError(
          405,
          'method_not_allowed',
          'DELETE is not allowed on /documents; use GET, HEAD, POST',
          {
            headers: { Allow: 'GET, HEAD, POST' },
          },
        );
      }
      const raw = target.slice(at + '/documents/'.length);
      let relPath: string;
      try {
        relPath = decodeURIComponent(raw);
      } catch {
        throw new HttpError(
          400,
          'invalid_path',
          'DELETE /documents/{path}: the path is not valid percent-encoding',
        );
      }
      await removeDocument(inputDir, relPath, allowedExtensions(config().config.docu_type as DocuType));
      return c.json({ deleted: relPath });
    });
}
