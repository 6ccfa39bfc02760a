/**
 * Documents and builds over HTTP (issue 16 item 6) against the real `noderag search` process
 * on a project built with the local provider: GET /documents with each file's status,
 * POST /documents (multipart, the upload guards), DELETE /documents/{path} (no symbolic link
 * followed), POST /build (one at a time: 409 while one runs here or a lock is held by another
 * process) and GET /build/events, after which the server serves the new generation. All
 * behind the API key.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../helpers/fake-providers/index.js';
import { createProject, type Project } from '../helpers/project.js';
import {
  envWith,
  freePort,
  killAll,
  readEvents,
  type Served,
  serve,
  stop,
  waitFor,
} from '../helpers/search-server.js';

const KEY = 'documents-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

const FILES = {
  'halden.txt':
    'Halden Observatory was founded in 1921 by Ingrid Halden on the hill above the harbour. Its first instrument was a refractor.',
  'notes/telescope.md':
    '# The Adeyemi Telescope\n\nConstruction began in 1964 and the telescope was completed in 1968.',
};

afterAll(killAll);

interface Listing {
  documents: { path: string; size: number | null; status: string; reason?: string }[];
  build: { running: boolean; state: string | null; generation: number };
  accepted: string[];
  maxUploadBytes: number;
}

describe('documents and builds over HTTP', () => {
  let p: Project;
  let server: Served;
  const outside = join(tmpdir(), `noderag-docs-outside-${process.pid}`);
  const listing = async (): Promise<Listing> => {
    const r = await fetch(`${server.url}/documents`, { headers: auth });
    expect(r.status).toBe(200);
    return (await r.json()) as Listing;
  };
  const statusOf = async (path: string) => (await listing()).documents.find((d) => d.path === path)?.status;
  const upload = (files: Record<string, string>, query = '', headers: Record<string, string> = auth) => {
    const form = new FormData();
    for (const [name, text] of Object.entries(files)) form.append('file', new Blob([text]), name);
    return fetch(`${server.url}/documents${query}`, { method: 'POST', headers, body: form });
  };

  beforeAll(async () => {
    p = await createProject({ files: FILES });
    const built = await p.build();
    expect(built.code, built.stderr).toBe(0);
    const port = await freePort();
    server = await serve(
      p.root,
      ['--port', String(port), '--max-upload-bytes', '4096'],
      envWith({ NODERAG_API_KEY: KEY }),
    );
  }, 120_000);
  afterAll(async () => {
    if (server) expect(await stop(server)).toBe(0);
    await p?.remove();
    await rm(outside, { recursive: true, force: true });
  });

  it('lists input/ with each file indexed, behind the key', async () => {
    expect((await fetch(`${server.url}/documents`)).status).toBe(401);
    const l = await listing();
    expect(l.documents).toEqual([
      { path: 'halden.txt', size: Buffer.byteLength(FILES['halden.txt']), status: 'indexed' },
      {
        path: 'notes/telescope.md',
        size: Buffer.byteLength(FILES['notes/telescope.md']),
        status: 'indexed',
      },
    ]);
    expect(l.accepted).toContain('.txt');
    expect(l.maxUploadBytes).toBe(4096);
  });

  it('uploads into input/ and shows the file as new; refuses what the guards refuse', async () => {
    const ok = await upload({ 'lighthouse.txt': 'The Skarv lighthouse keeper logged 312 storms.' });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ written: ['lighthouse.txt'] });
    expect(await statusOf('lighthouse.txt')).toBe('new');

    const again = await upload({ 'lighthouse.txt': 'other text' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('file_exists');

    const big = await upload({ 'big.txt': 'x'.repeat(5000) });
    expect(big.status).toBe(413);
    const bad = await upload({ '..hidden.txt': 'x' });
    expect(bad.status).toBe(400);
    const type = await upload({ 'tool.exe': 'x' });
    expect(type.status).toBe(415);
    const cross = await upload({ 'cross.txt': 'x' }, '', { ...auth, origin: 'https://evil.example' });
    expect(cross.status).toBe(403);
    expect(((await cross.json()) as { error: { message: string } }).error.message).toContain('--cors');
    const noKey = await upload({ 'nokey.txt': 'x' }, '', {});
    expect(noKey.status).toBe(401);
    const names = (await listing()).documents.map((d) => d.path);
    for (const n of ['big.txt', 'tool.exe', 'cross.txt', 'nokey.txt']) expect(names).not.toContain(n);
  });

  it('deletes a file from input/ (deleted-pending until the next build), never through a link', async () => {
    const del = await fetch(`${server.url}/documents/notes/telescope.md`, {
      method: 'DELETE',
      headers: auth,
    });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ deleted: 'notes/telescope.md' });
    expect(p.exists('input/notes/telescope.md')).toBe(false);
    expect(await statusOf('notes/telescope.md')).toBe('deleted-pending');

    const missing = await fetch(`${server.url}/documents/nothing.txt`, { method: 'DELETE', headers: auth });
    expect(missing.status).toBe(404);
    const up = await fetch(`${server.url}/documents/..%2FNode_config.yaml`, {
      method: 'DELETE',
      headers: auth,
    });
    expect(up.status).toBe(400);
    expect(p.exists('Node_config.yaml')).toBe(true);

    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'keep.txt'), 'outside input/');
    symlinkSync(outside, p.path('input', 'link'));
    const through = await fetch(`${server.url}/documents/link/keep.txt`, { method: 'DELETE', headers: auth });
    expect(through.status).toBe(400);
    expect(((await through.json()) as { error: { message: string } }).error.message).toContain(
      'not a folder',
    );
    await rm(p.path('input', 'link'));
  });

  it('runs one build at a time, streams its progress, then serves the new generation', async () => {
    const health = async () => (await (await fetch(`${server.url}/health`)).json()) as { generation: number };
    expect((await health()).generation).toBe(1);

    // A build held by another process: 409 naming it, nothing started.
    writeFileSync(
      p.path('info', 'build.lock'),
      `${JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() })}\n`,
    );
    const locked = await fetch(`${server.url}/build`, { method: 'POST', headers: auth });
    expect(locked.status).toBe(409);
    expect(((await locked.json()) as { error: { message: string } }).error.message).toContain(
      `process ${process.pid}`,
    );
    await rm(p.path('info', 'build.lock'));
    // A file with no text: skipped by this build, then listed as not indexable.
    writeFileSync(p.path('input', 'blank.md'), '\n');

    const [a, b] = await Promise.all(
      [0, 1].map(() => fetch(`${server.url}/build`, { method: 'POST', headers: auth })),
    );
    expect([a!.status, b!.status].sort()).toEqual([202, 409]);
    const events = await fetch(`${server.url}/build/events`, { headers: auth });
    expect(events.headers.get('content-type')).toContain('text/event-stream');
    const seen = await readEvents(events, (event) => event === 'done');
    const done = JSON.parse(seen[seen.length - 1]!.data) as { exitCode: number; message: string };
    expect(done.exitCode, seen.map((e) => e.data).join('\n')).toBe(0);
    expect(seen.some((e) => e.event === 'line')).toBe(true);

    await waitFor(async () => (await health()).generation === 2);
    expect(await statusOf('lighthouse.txt')).toBe('indexed');
    expect((await listing()).build).toEqual({ running: false, state: 'FINISHED', generation: 2 });
    expect((await listing()).documents.map((d) => d.path)).toEqual([
      'blank.md',
      'halden.txt',
      'lighthouse.txt',
    ]);
    expect((await listing()).documents[0]).toEqual({
      path: 'blank.md',
      size: 1,
      status: 'not-indexable',
      reason: 'no text (empty document)',
    });
    const r = await fetch(`${server.url}/retrieval`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'How many storms did the Skarv lighthouse keeper log?' }),
    });
    expect(r.status).toBe(200);
    const reply = (await r.json()) as { sources: { document: string }[] };
    expect(reply.sources.map((s) => s.document)).toContain('lighthouse.txt');
    expect(reply.sources.map((s) => s.document)).not.toContain('notes/telescope.md');
  }, 120_000);
});

describe('builds over HTTP with --workers 2', () => {
  it('a worker that dies during its build: the others show the build ended and take the next', async () => {
    // A slow provider: the build is still running when its worker is killed.
    const slow = await startFakeOpenAI({ apiKey: 'test-key', latencyMs: 300 });
    const p = await createProject({ files: FILES, provider: { openaiBaseUrl: slow.baseUrl } });
    try {
      const server = await serve(p.root, ['--port', String(await freePort()), '--workers', '2'], envWith());
      try {
        const events = await fetch(`${server.url}/build/events`);
        expect((await fetch(`${server.url}/build`, { method: 'POST' })).status).toBe(202);
        const lock = join(p.root, 'info', 'build.lock');
        await waitFor(async () => existsSync(lock));
        const builder = (JSON.parse(readFileSync(lock, 'utf8')) as { pid: number }).pid;
        process.kill(builder, 'SIGKILL');
        // Every open stream ends: the builder's own stream was cut, the others get a done.
        const seen = await readEvents(events, (event) => event === 'done', 30_000).catch(() => []);
        if (seen.length > 0) {
          expect(JSON.parse(seen[seen.length - 1]!.data)).toMatchObject({ kind: 'done', exitCode: 1 });
        }
        await waitFor(async () => server.output().stderr.includes('starting a replacement'));
        // Every worker (new connections go to each in turn) says no build runs.
        await waitFor(async () => {
          const running = [];
          for (let i = 0; i < 4; i++) {
            const r = await fetch(`${server.url}/documents`, { headers: { connection: 'close' } });
            running.push(((await r.json()) as { build: { running: boolean } }).build.running);
          }
          return running.every((x) => x === false);
        }, 15_000);
        // The replacement may still be starting: it stops too.
        expect(await stop(server)).toBe(0);
      } finally {
        if (server.child.exitCode === null) await stop(server);
      }
    } finally {
      await p.remove();
      await slow.close();
    }
  }, 120_000);

  it('runs one build across the workers and every worker streams its events', async () => {
    const p = await createProject({ files: FILES });
    try {
      const built = await p.build();
      expect(built.code, built.stderr).toBe(0);
      const server = await serve(p.root, ['--port', String(await freePort()), '--workers', '2'], envWith());
      try {
        // New connections alternate between the workers: streams are open on both.
        const streams = await Promise.all([0, 1, 2, 3].map(() => fetch(`${server.url}/build/events`)));
        await p.writeInput('lighthouse.txt', 'The Skarv lighthouse keeper logged 312 storms.');
        const starts = await Promise.all(
          [0, 1, 2, 3].map(() => fetch(`${server.url}/build`, { method: 'POST' })),
        );
        expect(starts.map((r) => r.status).sort()).toEqual([202, 409, 409, 409]);
        for (const s of streams) {
          const seen = await readEvents(s, (event) => event === 'done', 30_000);
          expect(JSON.parse(seen[seen.length - 1]!.data)).toMatchObject({ kind: 'done', exitCode: 0 });
        }
        const health = async () =>
          ((await (await fetch(`${server.url}/health`)).json()) as { generation: number }).generation;
        await waitFor(async () => (await health()) === 2 && (await health()) === 2);

        // Streams that follow every build (one on each worker) end when the server stops,
        // instead of holding it for the 10-s grace period.
        const followers = await Promise.all([0, 1].map(() => fetch(`${server.url}/build/events?follow=1`)));
        const ended = followers.map((f) => f.text());
        const t0 = Date.now();
        expect(await stop(server)).toBe(0);
        expect(Date.now() - t0).toBeLessThan(5000);
        for (const text of ended) expect(await text).toContain('event: done');
      } finally {
        if (server.child.exitCode === null) await stop(server);
      }
    } finally {
      await p.remove();
    }
  }, 120_000);
});
