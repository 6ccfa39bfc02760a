/**
 * GET /api/files: the documents of input/ with their status against the last build (new,
 * changed, indexed, renamed), the deleted ones, the accepted types and the upload limit
 * (ts/server/documents.ts, shared with the search server's GET /documents).
 * POST /api/files[?overwrite=1]: a multipart upload into input/ (ts/server/upload.ts).
 */
import { Hono } from 'hono';
import { allowedExtensions, type DocuType } from '../../indexing/discover.js';
import { listDocuments } from '../../server/documents.js';
import { receiveUpload } from '../../server/upload.js';
import type { FilesReply, UploadReply } from '../api-types.js';
import type { UiContext } from '../ui-context.js';

export function filesRoutes(ctx: UiContext): Hono {
  return new Hono()
    .get('/files', async (c) => {
      const listing = await listDocuments(ctx.root, ctx.loadConfig());
      return c.json<FilesReply>({ ...listing, maxUploadBytes: ctx.maxUploadBytes });
    })
    .post('/files', async (c) => {
      const written = await receiveUpload(c, {
        inputDir: ctx.inputDir,
        allowed: allowedExtensions(ctx.loadConfig().config.docu_type as DocuType),
        maxBytes: ctx.maxUploadBytes,
        overwrite: c.req.query('overwrite') === '1',
      });
      return c.json<UploadReply>({ ok: true, written });
    });
}
