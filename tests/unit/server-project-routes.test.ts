/**
 * The project routes of the search app (ts/server/project-routes.ts) with `app.request()`
 * and a stand-in build: mounted only with `AppDeps.project` (else 404, with it 405 for a
 * wrong method), POST /build takes the build lock before it answers (409 while one is held,
 * released after the build), a browser page on another origin cannot change anything (403),
 * and DELETE refuses paths that are not plain names under input/.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireBuildLock, type BuildLock } from '../../ts/indexing/lock.js';
import { createApp } from '../../ts/server/app.js';
import type { SearchEngine } from '../../ts/server/engine.js';
import { serveApp } from '../../ts/server/serve.js';
import { scratchDir } from '../helpers/scratch.js';
import { writeSearchConfig } from '../helpers/search-index.js';

const engine: SearchEngine = {
  status: async () => ({ ready: true, generation: 1, nodes: 0, vectors: 0 }),
  retrieve: async () => ({ retrievalInfo: '', retrievalTokens: 0 }),
  answer: async () => ({ response: '', responseTokens: 0, retrievalInfo: '', retrievalTokens: 0 }),
};

async function project(): Promise<string> {
  const folder = scratchDir('noderag-project-routes-');
  await writeSearchConfig(folder, { dim: 8 });
  return folder;
}

describe('project routes of the search app', () => {
  it('exist only when the app is given a project', async () => {
    const bare = createApp({ engine });
    expect((await bare.request('/documents')).status).toBe(404);
    expect((await bare.request('/build', { method: 'POST' })).status).toBe(404);
    const app = createApp({ engine, project: { folder: await project(), runBuild: async () => 0 } });
    const wrong = await app.request('/build');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    // A document's path takes DELETE only; without a project it is no route at all.
    const doc = await app.request('/documents/notes/a.md');
    expect(doc.status).toBe(405);
    expect(doc.headers.get('allow')).toBe('DELETE');
    expect((await bare.request('/documents/notes/a.md')).status).toBe(404);
  });

  it('takes the build lock before answering POST /build, and the build releases it', async () => {
    const folder = await project();
    const held = await acquireBuildLock(folder);
    let release!: () => void;
    const finish = new Promise<void>((r) => {
      release = r;
    });
    let given: BuildLock | undefined;
    const app = createApp({
      engine,
      project: {
        folder,
        runBuild: async (sinks, lock) => {
          given = lock;
          sinks.stdout.write('working\n');
          await finish;
          return 0;
        },
      },
    });
    const locked = await app.request('/build', { method: 'POST' });
    expect(locked.status).toBe(409);
    expect(((await locked.json()) as { error: { code: string } }).error.code).toBe('build_running');
    await held.release();

    expect((await app.request('/build', { method: 'POST' })).status).toBe(202);
    expect(given?.path).toBe(join(folder, 'info', 'build.lock'));
    expect(existsSync(given!.path)).toBe(true);
    expect((await app.request('/build', { method: 'POST' })).status).toBe(409);
    const during = (await (await app.request('/documents')).json()) as { build: unknown };
    expect(during.build).toEqual({ running: true, state: null, generation: 0 });
    release();
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(given!.path)).toBe(false);
  });

  it('refuses state changes from a page on another origin than --cors', async () => {
    const folder = await project();
    writeFileSync(join(folder, 'input', 'a.txt'), 'text');
    const deps = { folder, runBuild: async () => 0 };
    const app = createApp({ engine, project: deps, cors: 'https://app.example.com' });
    for (const [path, method] of [
      ['/build', 'POST'],
      ['/documents', 'POST'],
      ['/documents/a.txt', 'DELETE'],
    ] as const) {
      const r = await app.request(path, { method, headers: { origin: 'https://evil.example' } });
      expect(r.status, `${method} ${path}`).toBe(403);
    }
    expect(existsSync(join(folder, 'input', 'a.txt'))).toBe(true);
    expect((await app.request('/documents', { headers: { origin: 'https://evil.example' } })).status).toBe(
      200,
    );
    const allowed = await app.request('/documents/a.txt', {
      method: 'DELETE',
      headers: { origin: 'https://app.example.com' },
    });
    expect(allowed.status).toBe(200);
    expect(existsSync(join(folder, 'input', 'a.txt'))).toBe(false);
  });

  it('deletes only plain names of indexable files under input/', async () => {
    const folder = await project();
    mkdirSync(join(folder, 'input', 'sub'));
    writeFileSync(join(folder, 'input', 'sub', 'b.md'), '# b');
    writeFileSync(join(folder, 'input', 'keep.bin'), 'x');
    const app = createApp({ engine, project: { folder, runBuild: async () => 0 } });
    const del = (path: string) => app.request(`/documents/${path}`, { method: 'DELETE' });
    for (const bad of [
      '%2E%2E%2FNode_config.yaml',
      '.hidden.txt',
      'sub%2F..%2F..%2Fx.txt',
      'keep.bin',
      'sub',
    ]) {
      expect((await del(bad)).status, bad).toBe(400);
    }
    expect((await del('nothing.txt')).status).toBe(404);
    const bare = await app.request('/documents', { method: 'DELETE' });
    expect(bare.status).toBe(405);
    expect(bare.headers.get('allow')).toBe('GET, HEAD, POST');
    expect((await app.request('/documents/', { method: 'DELETE' })).status).toBe(405);
    expect((await del('%ZZ')).status).toBe(400);
    expect((await del('sub/b.md')).status).toBe(200);
    expect(existsSync(join(folder, 'input', 'sub', 'b.md'))).toBe(false);
    expect(existsSync(join(folder, 'Node_config.yaml'))).toBe(true);
  });

  it('refuses an upload named like an Office lock file (~$…), which a build would leave out', async () => {
    const folder = await project();
    const app = createApp({ engine, project: { folder, runBuild: async () => 0 } });
    const form = new FormData();
    form.append('file', new Blob(['text']), '~$report.txt');
    const r = await app.request('/documents', { method: 'POST', body: form });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain(
      'the name of an Office lock file',
    );
    expect(existsSync(join(folder, 'input', '~$report.txt'))).toBe(false);
  });

  it('POST /build on a project without input/ is 409 no_input_folder, no build started', async () => {
    const folder = await project();
    rmSync(join(folder, 'input'), { recursive: true });
    let ran = false;
    const app = createApp({
      engine,
      project: {
        folder,
        runBuild: async () => {
          ran = true;
          return 0;
        },
      },
    });
    const r = await app.request('/build', { method: 'POST' });
    expect(r.status).toBe(409);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('no_input_folder');
    expect(ran).toBe(false);
    expect(existsSync(join(folder, 'info', 'build.lock'))).toBe(false);
  });

  it('refuses a `..` segment as the client sent it, before any URL parsing resolves it', async () => {
    const folder = await project();
    writeFileSync(join(folder, 'input', 'a.txt'), 'a');
    const app = createApp({ engine, project: { folder, runBuild: async () => 0 } });
    const server = await serveApp(app, { host: '127.0.0.1', port: 0 });
    try {
      for (const path of ['/documents/no-such-folder/../a.txt', '/documents/sub/%2e%2e/a.txt']) {
        const status = await new Promise<number>((resolve, reject) => {
          // (Given as `path`: a URL given to request() would resolve the `..` first.)
          request({ host: '127.0.0.1', port: server.port, path, method: 'DELETE' }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
            .on('error', reject)
            .end();
        });
        expect(status, path).toBe(400);
      }
      expect(existsSync(join(folder, 'input', 'a.txt'))).toBe(true);
    } finally {
      await server.close();
    }
  });
});
