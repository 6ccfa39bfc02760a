/**
 * GET /api/files: the documents of input/ with their status against the last build (new,
 * changed, indexed, renamed), the deleted ones, the accepted types and the upload limit.
 * POST /api/files[?overwrite=1]: a multipart upload into input/ (./upload.ts).
 */
import { stat } from 'node:fs/promises';
import { Hono } from 'hono';
import { allowedExtensions, type DocuType, discoverDocuments } from '../../indexing/discover.js';
import { readDocumentHashes } from '../../indexing/info-files.js';
import type { FileEntry, FilesReply, UploadReply } from '../api-types.js';
import type { UiContext } from '../ui-context.js';
import { receiveUpload } from '../upload.js';

export function filesRoutes(ctx: UiContext): Hono {
  const docuType = () => ctx.loadConfig().config.docu_type as DocuType;
  return new Hono()
    .get('/files', async (c) => {
      const type = docuType();
      const plan = await discoverDocuments(ctx.inputDir, type, await readDocumentHashes(ctx.root));
      const status = new Map<string, FileEntry['status']>();
      for (const p of plan.indexed) status.set(p, 'indexed');
      for (const p of plan.new) status.set(p, 'new');
      for (const p of plan.changed) status.set(p, 'changed');
      for (const d of plan.duplicate) status.set(d.path, 'new');
      for (const r of plan.renamed) status.set(r.path, 'renamed');
      const files = await Promise.all(
        plan.files.map(async (f) => ({
          path: f.path,
          size: (await stat(f.absPath)).size,
          status: status.get(f.path) ?? 'new',
        })),
      );
      return c.json<FilesReply>({
        files,
        deleted: plan.deleted,
        unreadable: plan.unreadable.map((u) => u.path),
        accepted: [...allowedExtensions(type)],
        maxUploadBytes: ctx.maxUploadBytes,
      });
    })
    .post('/files', async (c) => {
      const written = await receiveUpload(c, {
        inputDir: ctx.inputDir,
        allowed: allowedExtensions(docuType()),
        maxBytes: ctx.maxUploadBytes,
        overwrite: c.req.query('overwrite') === '1',
      });
      return c.json<UploadReply>({ ok: true, written });
    });
}
