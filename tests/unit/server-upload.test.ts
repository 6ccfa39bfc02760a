/**
 * Uploads into input/ (ts/server/upload.ts): all files of a request or none, also when placing
 * them fails part way; the limits on part headers and on the number of files.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NodeRagError } from '../../ts/errors.js';
import { errorHandler, statusFor } from '../../ts/server/http.js';
import { MAX_FILES, receiveUpload } from '../../ts/server/upload.js';
import { scratchDir } from '../helpers/scratch.js';

/** Runs before the real fs call on that target name (the race or failure a test stages). */
const before = new Map<string, { link?: () => void; rename?: () => void }>();

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...real,
    link: async (from: string, to: string) => {
      before.get(basename(to))?.link?.();
      return real.link(from, to);
    },
    rename: async (from: string, to: string) => {
      before.get(basename(to))?.rename?.();
      return real.rename(from, to);
    },
  };
});

afterEach(() => before.clear());

function uploadApp(inputDir: string, maxFiles?: number) {
  const app = new Hono();
  app.onError(errorHandler(() => {}));
  app.post('/documents', async (c) =>
    c.json(
      {
        written: await receiveUpload(c, {
          inputDir,
          allowed: new Set(['.txt']),
          maxBytes: 20 * 1024 * 1024,
          overwrite: c.req.query('overwrite') === '1',
          ...(maxFiles ? { maxFiles } : {}),
        }),
      },
      201,
    ),
  );
  return app;
}

function form(files: Record<string, string>): FormData {
  const f = new FormData();
  for (const [name, text] of Object.entries(files)) f.append('file', new Blob([text]), name);
  return f;
}

const post = (app: Hono, body: FormData | string, query = '', type?: string) =>
  app.request(`/documents${query}`, {
    method: 'POST',
    body,
    ...(type ? { headers: { 'content-type': type } } : {}),
  });

const listing = (dir: string) => readdirSync(dir).sort();

describe('uploads: all files or none', () => {
  it('takes back the files it placed when a later name is taken meanwhile', async () => {
    const input = scratchDir('noderag-upload-');
    // Another request creates b.txt after this one checked the names, before it links b.txt.
    before.set('b.txt', { link: () => writeFileSync(join(input, 'b.txt'), 'the other request') });
    const r = await post(uploadApp(input), form({ 'a.txt': 'A', 'b.txt': 'B', 'c.txt': 'C' }));
    expect(r.status).toBe(409);
    const { error } = (await r.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('file_exists');
    // What to send to replace it (the API's words, not the web UI's).
    expect(error.message).toBe(
      '"b.txt" already exists in input/; send it again with ?overwrite=1 to replace it',
    );
    // a.txt was placed, then taken back; b.txt is the other request's.
    expect(listing(input)).toEqual(['b.txt']);
    expect(readFileSync(join(input, 'b.txt'), 'utf8')).toBe('the other request');
  });

  it('with overwrite, puts back the files it replaced when a later one fails', async () => {
    const input = scratchDir('noderag-upload-');
    writeFileSync(join(input, 'a.txt'), 'old A');
    before.set('b.txt', {
      rename: () => {
        throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
      },
    });
    const r = await post(uploadApp(input), form({ 'a.txt': 'new A', 'b.txt': 'new B' }), '?overwrite=1');
    expect(r.status).toBe(500);
    expect(listing(input)).toEqual(['a.txt']);
    expect(readFileSync(join(input, 'a.txt'), 'utf8')).toBe('old A');
    // And when every file goes in, the replaced ones leave no second name behind.
    before.clear();
    const ok = await post(uploadApp(input), form({ 'a.txt': 'new A', 'b.txt': 'new B' }), '?overwrite=1');
    expect(ok.status).toBe(201);
    expect(listing(input)).toEqual(['a.txt', 'b.txt']);
    expect(readFileSync(join(input, 'a.txt'), 'utf8')).toBe('new A');
  });
});

describe('uploads: limits', () => {
  const multipart = (parts: string[]) => `${parts.map((p) => `--B\r\n${p}\r\n`).join('')}--B--\r\n`;
  const TYPE = 'multipart/form-data; boundary=B';

  it('refuses a part header longer than 16 KiB, also when it arrives in one piece', async () => {
    const input = scratchDir('noderag-upload-');
    const header = `Content-Disposition: form-data; name="file"; filename="h.txt"\r\nX-Pad: ${'p'.repeat(17_000)}`;
    const r = await post(uploadApp(input), multipart([`${header}\r\n\r\nbody`]), '', TYPE);
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/longer than 16 KiB/);
    expect(listing(input)).toEqual([]);
  });

  it('refuses more files in one request than its limit (MAX_FILES by default)', async () => {
    expect(MAX_FILES).toBe(10_000);
    const input = scratchDir('noderag-upload-');
    const parts = (n: number) =>
      Array.from(
        { length: n },
        (_, i) => `Content-Disposition: form-data; name="file"; filename="f${i}.txt"\r\n\r\nx`,
      );
    const r = await post(uploadApp(input, 3), multipart(parts(4)), '', TYPE);
    expect(r.status).toBe(413);
    const error = ((await r.json()) as { error: { code: string; message: string } }).error;
    expect(error).toEqual({ code: 'too_many_files', message: expect.stringMatching(/at most 3 files/) });
    expect(listing(input)).toEqual([]);
    expect((await post(uploadApp(input, 3), multipart(parts(3)), '', TYPE)).status).toBe(201);
  });
});

describe('uploads: a project without input/', () => {
  it('answers 409 no_input_folder, and the listing too', async () => {
    const root = scratchDir('noderag-upload-');
    const r = await post(uploadApp(join(root, 'input')), form({ 'a.txt': 'A' }));
    expect(r.status).toBe(409);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('no_input_folder');
    expect(readdirSync(root)).toEqual([]);
    expect(statusFor(new NodeRagError('no_input_folder', 'x does not exist')).status).toBe(409);
  });
});
