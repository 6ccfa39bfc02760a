/**
 * Routes of the web UI through app.request(): the same-origin guard, upload guards
 * (traversal names, wrong types, oversize, overwrite), config save validation, the
 * build lock and the context split. Builds and search are fakes; no addon is loaded.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { updateConfigFile } from '../../ts/config/update.js';
import { initialState, writeState } from '../../ts/project/state.js';
import { BuildJob } from '../../ts/server/build-job.js';
import { type RunningServer, serveApp } from '../../ts/server/serve.js';
import { createUiApp, type UiDeps } from '../../ts/ui/app.js';
import { originProblem } from '../../ts/ui/guards.js';
import { scratchDir } from '../helpers/scratch.js';

const HOST = '127.0.0.1:8501';
const ORIGIN = `http://${HOST}`;
const SAME = { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'same-origin' };

function makeApp(over: Partial<UiDeps> = {}) {
  const folder = scratchDir('noderag-ui-');
  const app = createUiApp({
    folder,
    runBuild: async () => 0,
    openSearch: () => {
      throw new Error('not used');
    },
    countEdges: async () => null,
    maxUploadBytes: 1000,
    logError: () => {},
    ...over,
  });
  // The offline providers: POST /api/build refuses a config the build would refuse (the
  // template's openai without a key).
  updateConfigFile(folder, {
    model_config: { service_provider: 'local', model_name: 'local' },
    embedding_config: { service_provider: 'local', embedding_model_name: 'feature-hash' },
  });
  return { app, folder };
}

function uploadBody(files: { name: string; content: string | Uint8Array }[]): FormData {
  const form = new FormData();
  for (const f of files) form.append('file', new File([f.content], f.name), f.name);
  return form;
}

describe('ui app: first start and the origin check', () => {
  it('creates the config template on a folder without one', async () => {
    const { app, folder } = makeApp();
    expect(existsSync(join(folder, 'Node_config.yaml'))).toBe(true);
    const r = await app.request('/api/config', { headers: { host: HOST } });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { values: { config: { chunk_size: number } } };
    expect(body.values.config.chunk_size).toBe(1048);
  });

  it('refuses state-changing requests from another origin or without one', async () => {
    const { app } = makeApp();
    const cases: Record<string, string>[] = [
      { host: HOST },
      { host: HOST, origin: 'http://evil.example' },
      { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'cross-site' },
      { host: 'evil.example:8501', origin: 'http://evil.example:8501' },
    ];
    for (const headers of cases) {
      for (const path of ['/api/build', '/api/config', '/api/files']) {
        const r = await app.request(path, { method: 'POST', headers });
        expect(r.status, `${path} ${JSON.stringify(headers)}`).toBe(403);
        const code = ((await r.json()) as { error: { code: string } }).error.code;
        expect(code).toBe(headers.host === HOST ? 'cross_origin' : 'wrong_host');
      }
    }
    const ok = await app.request('/api/build', { method: 'POST', headers: SAME });
    expect(ok.status).toBe(202);
  });

  it('refuses reads under a foreign Host name (DNS rebinding)', async () => {
    const { app } = makeApp();
    for (const host of ['evil.example:8501', '']) {
      const r = await app.request('/api/files', { headers: host ? { host } : {} });
      expect(r.status, host).toBe(403);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('wrong_host');
    }
    expect((await app.request('/api/status', { headers: { host: 'localhost:8501' } })).status).toBe(200);
  });

  it('originProblem accepts the own origin with or without Sec-Fetch-Site', () => {
    expect(originProblem({ host: HOST, origin: ORIGIN })).toBeNull();
    expect(originProblem({ host: HOST, secFetchSite: 'same-origin' })).toBeNull();
    expect(originProblem({ host: 'localhost:3000', origin: 'http://localhost:3000' })).toBeNull();
    expect(originProblem({ host: HOST, origin: 'http://127.0.0.1:9999' })).toMatch(/not this app/);
    expect(originProblem({ host: HOST, secFetchSite: 'same-site', origin: ORIGIN })).toMatch(/same-site/);
  });
});

describe('ui app: uploads', () => {
  it('writes a supported file and lists it as new', async () => {
    const { app, folder } = makeApp();
    const r = await app.request('/api/files', {
      method: 'POST',
      headers: SAME,
      body: uploadBody([{ name: 'a.txt', content: 'hello' }]),
    });
    expect(r.status).toBe(200);
    expect(readFileSync(join(folder, 'input', 'a.txt'), 'utf8')).toBe('hello');
    const list = (await (await app.request('/api/files', { headers: { host: HOST } })).json()) as {
      files: { path: string; status: string }[];
    };
    expect(list.files).toEqual([expect.objectContaining({ path: 'a.txt', status: 'new' })]);
  });

  it('lists indexed, changed and new files against document_hash.json', async () => {
    const { app, folder } = makeApp();
    writeFileSync(join(folder, 'input', 'same.txt'), 'same');
    writeFileSync(join(folder, 'input', 'edited.txt'), 'edited');
    writeFileSync(join(folder, 'input', 'fresh.txt'), 'fresh');
    const sha = (t: string) => createHash('sha256').update(t).digest('hex');
    mkdirSync(join(folder, 'info'), { recursive: true });
    writeFileSync(
      join(folder, 'info', 'document_hash.json'),
      JSON.stringify({ 'edited.txt': sha('before'), 'same.txt': sha('same') }),
    );
    const r = await app.request('/api/files', { headers: { host: HOST } });
    const body = (await r.json()) as { files: { path: string; status: string }[] };
    expect(Object.fromEntries(body.files.map((f) => [f.path, f.status]))).toEqual({
      'edited.txt': 'changed',
      'fresh.txt': 'new',
      'same.txt': 'indexed',
    });
  });

  it('refuses traversal and hidden names, writing nothing', async () => {
    const { app, folder } = makeApp();
    for (const name of ['../evil.txt', '..\\evil.txt', 'sub/evil.txt', '..', '.hidden.txt', 'a\u0001.txt']) {
      const r = await app.request('/api/files', {
        method: 'POST',
        headers: SAME,
        body: uploadBody([{ name, content: 'x' }]),
      });
      expect(r.status, name).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('invalid_file_name');
    }
    expect(readdirSync(join(folder, 'input'))).toEqual([]);
    expect(existsSync(join(folder, 'evil.txt'))).toBe(false);
  });

  it('refuses unsupported types and oversize files; a refused batch writes nothing', async () => {
    const { app, folder } = makeApp();
    const wrong = await app.request('/api/files', {
      method: 'POST',
      headers: SAME,
      body: uploadBody([
        { name: 'ok.md', content: '# fine' },
        { name: 'run.exe', content: 'MZ' },
      ]),
    });
    expect(wrong.status).toBe(415);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('unsupported_file_type');
    const big = await app.request('/api/files', {
      method: 'POST',
      headers: SAME,
      body: uploadBody([{ name: 'big.txt', content: 'x'.repeat(5000) }]),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as ErrorBody).error.message).toBe('"big.txt" is larger than 1000 bytes');
    // The limit holds for the request too: two files under it, over it together.
    const pair = await app.request('/api/files', {
      method: 'POST',
      headers: SAME,
      body: uploadBody([
        { name: 'a.txt', content: 'x'.repeat(600) },
        { name: 'b.txt', content: 'y'.repeat(600) },
      ]),
    });
    expect(pair.status).toBe(413);
    expect(((await pair.json()) as ErrorBody).error.message).toBe('the upload is larger than 1000 bytes');
    // A bad name is a bad name whatever words it holds (the type check comes after it).
    const named = await app.request('/api/files', {
      method: 'POST',
      headers: SAME,
      body: uploadBody([{ name: 'x/can be indexed.md', content: 'hi' }]),
    });
    expect(named.status).toBe(400);
    expect(((await named.json()) as ErrorBody).error.code).toBe('invalid_file_name');
    expect(readdirSync(join(folder, 'input'))).toEqual([]);
  });

  it('does not overwrite without the explicit flag', async () => {
    const { app, folder } = makeApp();
    writeFileSync(join(folder, 'input', 'a.txt'), 'old');
    const send = (q: string) =>
      app.request(`/api/files${q}`, {
        method: 'POST',
        headers: SAME,
        body: uploadBody([{ name: 'a.txt', content: 'new' }]),
      });
    expect((await send('')).status).toBe(409);
    expect(readFileSync(join(folder, 'input', 'a.txt'), 'utf8')).toBe('old');
    expect((await send('?overwrite=1')).status).toBe(200);
    expect(readFileSync(join(folder, 'input', 'a.txt'), 'utf8')).toBe('new');
  });
});

describe('ui app: config save', () => {
  const save = (app: ReturnType<typeof makeApp>['app'], data: unknown) =>
    app.request('/api/config', {
      method: 'POST',
      headers: { ...SAME, 'content-type': 'application/json' },
      body: JSON.stringify(data),
    });

  it('a config file or section that is not a mapping, or not a file, is a 422 (not a 500)', async () => {
    const { app, folder } = makeApp();
    const path = join(folder, 'Node_config.yaml');
    writeFileSync(path, 'config: 5\n');
    const bad = await save(app, { config: { chunk_size: '512' } });
    expect(bad.status).toBe(422);
    const body = (await bad.json()) as { error: { problems: { path: string; message: string }[] } };
    expect(body.error.problems).toContainEqual({ path: 'config', message: 'expected a mapping, got 5' });
    expect(readFileSync(path, 'utf8')).toBe('config: 5\n');
    rmSync(path);
    mkdirSync(path);
    const folderConfig = await save(app, { config: { chunk_size: '512' } });
    expect(folderConfig.status).toBe(422);
    expect(((await folderConfig.json()) as { error: { message: string } }).error.message).toContain(
      'is a folder, not a file',
    );
  });

  it('a file with a value out of range is shown as written, with its problems by key path', async () => {
    const { app, folder } = makeApp();
    const path = join(folder, 'Node_config.yaml');
    writeFileSync(path, readFileSync(path, 'utf8').replace(/^(\s*)dim: \d+/m, '$1dim: 70000'));
    const r = await app.request('/api/config', { headers: SAME });
    expect(r.status).toBe(200);
    const body = (await r.json()) as {
      values: Record<string, Record<string, unknown>>;
      choices: { service_provider: string[] };
      problems: { path: string; message: string }[];
    };
    expect(body.values.config!.dim).toBe(70000);
    expect(body.values.model_config!.service_provider).toBeTruthy();
    expect(body.choices.service_provider.length).toBeGreaterThan(0);
    expect(body.problems.map((p) => p.path)).toEqual(['config.dim']);
    // Fixed from the form, it loads again.
    expect((await save(app, { config: { dim: '256' } })).status).toBe(200);
    expect(
      ((await (await app.request('/api/config')).json()) as { problems?: unknown }).problems,
    ).toBeUndefined();
  });

  it('a build another process runs (a terminal) shows as building and blocks saving the config', async () => {
    const { app, folder } = makeApp();
    const other = spawn('sleep', ['30']);
    try {
      await new Promise((r) => other.once('spawn', r));
      mkdirSync(join(folder, 'info'), { recursive: true });
      writeFileSync(
        join(folder, 'info', 'build.lock'),
        `${JSON.stringify({ pid: other.pid, started_at: new Date(Date.now() + 1000).toISOString() })}\n`,
      );
      const status = (await (await app.request('/api/status', { headers: SAME })).json()) as {
        building: boolean;
      };
      expect(status.building).toBe(true);
      const r = await save(app, { config: { chunk_size: '512' } });
      expect(r.status).toBe(409);
      expect(((await r.json()) as { error: { message: string } }).error.message).toContain(
        `a build is running in another process (pid ${other.pid})`,
      );
    } finally {
      other.kill();
    }
  });

  it('returns field problems by key path and leaves the file untouched', async () => {
    const { app, folder } = makeApp();
    const before = readFileSync(join(folder, 'Node_config.yaml'), 'utf8');
    const r = await save(app, {
      config: { chunk_size: 'big', Enode: '-3' },
      model_config: { service_provider: 'x' },
    });
    expect(r.status).toBe(422);
    const body = (await r.json()) as { error: { problems: { path: string; message: string }[] } };
    const paths = body.error.problems.map((p) => p.path).sort();
    expect(paths).toEqual(['config.Enode', 'config.chunk_size', 'model_config.service_provider']);
    expect(readFileSync(join(folder, 'Node_config.yaml'), 'utf8')).toBe(before);
  });

  it('refuses a body with no known section (400 naming them) and a section that is no object', async () => {
    const { app, folder } = makeApp();
    const before = readFileSync(join(folder, 'Node_config.yaml'), 'utf8');
    for (const body of [{}, { settings: { chunk_size: 256 } }, { config: 'chunk_size=256' }]) {
      const r = await save(app, body);
      expect(r.status).toBe(400);
      const { error } = (await r.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('invalid_body');
      expect(error.message).toMatch(/model_config, embedding_config, config|"config" must be an object/);
    }
    expect(readFileSync(join(folder, 'Node_config.yaml'), 'utf8')).toBe(before);
  });

  it('saves into a section written bare (`config:` or `config: ~`), which the file may have', async () => {
    for (const bare of ['config:', 'config: ~']) {
      const { app, folder } = makeApp();
      writeFileSync(
        join(folder, 'Node_config.yaml'),
        `model_config:\n  service_provider: local\nembedding_config:\n  service_provider: local\n${bare}\n`,
      );
      const r = await save(app, { config: { dim: '256' } });
      expect(r.status, bare).toBe(200);
      expect(readFileSync(join(folder, 'Node_config.yaml'), 'utf8')).toMatch(/^config:\n {2}dim: 256$/m);
    }
  });

  it('saves valid values keeping comments; the API key is write-only', async () => {
    const { app, folder } = makeApp();
    const r = await save(app, {
      model_config: {
        service_provider: 'openai',
        model_name: 'gpt-4o-mini',
        base_url: '',
        api_keys: 'sk-secret-123',
      },
      embedding_config: { service_provider: 'local', embedding_model_name: 'feature-hash', api_keys: '' },
      config: { chunk_size: '256', dim: '64' },
    });
    expect(r.status).toBe(200);
    const text = readFileSync(join(folder, 'Node_config.yaml'), 'utf8');
    expect(text).toMatch(/chunk_size: 256/);
    expect(text).toMatch(/#/);
    expect(text).toContain('sk-secret-123');
    const got = await (await app.request('/api/config', { headers: { host: HOST } })).text();
    expect(got).not.toContain('sk-secret-123');
    expect(JSON.parse(got).apiKeySet.model_config).toBe(true);
  });
});

describe('ui app: build lock and chat', () => {
  it('a build another process holds is a 409 before anything starts, as on the search server', async () => {
    let ran = 0;
    const { app, folder } = makeApp({
      runBuild: async () => {
        ran++;
        return 0;
      },
    });
    mkdirSync(join(folder, 'info'), { recursive: true });
    // A live process that is not this one (a lock naming this pid counts only if it took it).
    writeFileSync(
      join(folder, 'info', 'build.lock'),
      `${JSON.stringify({ pid: process.ppid, started_at: new Date().toISOString() })}\n`,
    );
    const r = await app.request('/api/build', { method: 'POST', headers: SAME });
    expect(r.status).toBe(409);
    expect(((await r.json()) as ErrorBody).error.message).toContain(
      `process ${process.ppid} holds the build lock`,
    );
    expect(ran).toBe(0);
  });

  it('a config the build would refuse is a 422 naming the key, before any build starts', async () => {
    let ran = 0;
    const { app, folder } = makeApp({
      runBuild: async () => {
        ran++;
        return 0;
      },
    });
    const path = join(folder, 'Node_config.yaml');
    writeFileSync(path, readFileSync(path, 'utf8').replace(/chunk_size: \d+/, 'chunk_size: big'));
    const r = await app.request('/api/build', { method: 'POST', headers: SAME });
    expect(r.status).toBe(422);
    const body = (await r.json()) as ErrorBody;
    expect(body.error.code).toBe('invalid_config');
    expect(body.error.message).toContain('config.chunk_size: expected an integer');
    expect(ran).toBe(0);
  });

  it('a save whose body is still arriving when a build starts is refused, not written mid-build', async () => {
    let release = () => {};
    const { app, folder } = makeApp({
      runBuild: () =>
        new Promise<number>((r) => {
          release = () => r(0);
        }),
    });
    const before = readFileSync(join(folder, 'Node_config.yaml'), 'utf8');
    let send!: (text: string) => void;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        send = (text) => {
          c.enqueue(new TextEncoder().encode(text));
          c.close();
        };
      },
    });
    const saving = app.request('/api/config', {
      method: 'POST',
      headers: { ...SAME, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    await new Promise((r) => setTimeout(r, 50));
    expect((await app.request('/api/build', { method: 'POST', headers: SAME })).status).toBe(202);
    send(JSON.stringify({ config: { Enode: '11' } }));
    const r = await saving;
    expect(r.status).toBe(409);
    expect(((await r.json()) as ErrorBody).error.code).toBe('build_running');
    expect(readFileSync(join(folder, 'Node_config.yaml'), 'utf8')).toBe(before);
    release();
  });

  it('refuses a second build while one runs and streams its lines', async () => {
    let release = () => {};
    const { app } = makeApp({
      runBuild: async ({ stdout }) => {
        stdout.write('[1/8] Document pipeline\n');
        await new Promise<void>((r) => {
          release = r;
        });
        return 1;
      },
    });
    expect((await app.request('/api/build', { method: 'POST', headers: SAME })).status).toBe(202);
    const second = await app.request('/api/build', { method: 'POST', headers: SAME });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('build_running');
    const status = (await (await app.request('/api/status', { headers: { host: HOST } })).json()) as {
      status: string;
    };
    expect(status.status).toBe('Building');
    release();
    const events = await app.request('/api/build/events', { headers: { host: HOST } });
    const reader = events.body!.getReader();
    let text = '';
    while (!text.includes('event: done')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    expect(text).toContain('Document pipeline');
    expect(text).toMatch(/The build failed/);

    // After the build: its events again, then the end of the stream; ?follow=1 stays open.
    const replay = await (await app.request('/api/build/events', { headers: { host: HOST } })).text();
    expect(replay).toContain('Document pipeline');
    expect(replay.trimEnd().endsWith('}')).toBe(true);
    expect(replay.match(/event: done/g)).toHaveLength(1);
    const followed = await app.request('/api/build/events?follow=1', { headers: { host: HOST } });
    const follower = followed.body!.getReader();
    let seen = '';
    while (!seen.includes('event: done')) seen += new TextDecoder().decode((await follower.read()).value);
    const next = await Promise.race([
      follower.read().then(() => 'more'),
      new Promise((r) => setTimeout(() => r('still open'), 300)),
    ]);
    expect(next).toBe('still open');
    await follower.cancel();
  });

  it('answers HEAD of the build events with the headers only, subscribing to nothing', async () => {
    const subscribe = vi.spyOn(BuildJob.prototype, 'subscribe');
    try {
      const { app } = makeApp();
      for (let i = 0; i < 3; i++) {
        const r = await app.request('/api/build/events', { method: 'HEAD', headers: { host: HOST } });
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toBe('text/event-stream');
        expect(await r.text()).toBe('');
      }
      expect(subscribe).not.toHaveBeenCalled();
    } finally {
      subscribe.mockRestore();
    }
  });

  it('ends a followed build-event stream when the UI server stops (closing)', async () => {
    const closing = new AbortController();
    const { app } = makeApp({ closing: closing.signal, runBuild: async () => 0 });
    expect((await app.request('/api/build', { method: 'POST', headers: SAME })).status).toBe(202);
    const followed = await app.request('/api/build/events?follow=1', { headers: { host: HOST } });
    const text = followed.text();
    const early = await Promise.race([text, new Promise((r) => setTimeout(() => r('still open'), 200))]);
    expect(early).toBe('still open');
    closing.abort();
    expect(await text).toContain('event: done');
  });

  it('refuses questions before a build', async () => {
    const { app } = makeApp();
    const r = await app.request('/api/chat', {
      method: 'POST',
      headers: { ...SAME, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'why?' }),
    });
    expect(r.status).toBe(503);
  });
});

type ErrorBody = { error: { code: string; message: string } };

describe('ui app: uploads never write outside input/ (issue 18 item 5)', () => {
  it('overwriting a name that is a symlink replaces the link and never writes through it', async () => {
    const { app, folder } = makeApp();
    const outside = scratchDir('noderag-ui-outside-');
    writeFileSync(join(outside, 'target.txt'), 'outside');
    symlinkSync(join(outside, 'target.txt'), join(folder, 'input', 'a.txt'));
    symlinkSync(join(outside, 'missing.txt'), join(folder, 'input', 'b.txt')); // dangling
    const send = (q: string) =>
      app.request(`/api/files${q}`, {
        method: 'POST',
        headers: SAME,
        body: uploadBody([
          { name: 'a.txt', content: 'new a' },
          { name: 'b.txt', content: 'new b' },
        ]),
      });
    expect((await send('')).status).toBe(409); // the link is a name that exists
    const r = await send('?overwrite=1');
    expect(r.status).toBe(200);
    expect(readFileSync(join(outside, 'target.txt'), 'utf8')).toBe('outside');
    expect(existsSync(join(outside, 'missing.txt'))).toBe(false);
    for (const [name, text] of [
      ['a.txt', 'new a'],
      ['b.txt', 'new b'],
    ] as const) {
      expect(lstatSync(join(folder, 'input', name)).isSymbolicLink(), name).toBe(false);
      expect(readFileSync(join(folder, 'input', name), 'utf8')).toBe(text);
    }
    expect(readdirSync(join(folder, 'input')).sort()).toEqual(['a.txt', 'b.txt']);
  });

  it('a body without Content-Length is refused at the limit while streaming, not buffered whole', async () => {
    const { app, folder } = makeApp(); // maxUploadBytes 1000
    const boundary = 'noderagBoundary';
    const enc = new TextEncoder();
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`;
    const total = 2_000_000;
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode(head));
      },
      pull(c) {
        if (pulled >= total) {
          c.enqueue(enc.encode(`\r\n--${boundary}--\r\n`));
          c.close();
          return;
        }
        pulled += 10_000;
        c.enqueue(new Uint8Array(10_000).fill(120));
      },
    });
    const r = await app.request('/api/files', {
      method: 'POST',
      headers: { ...SAME, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(r.status).toBe(413);
    expect(((await r.json()) as ErrorBody).error.code).toBe('file_too_large');
    expect(pulled).toBeLessThan(100_000);
    expect(readdirSync(join(folder, 'input'))).toEqual([]);
  });

  it('checks names by UTF-8 bytes and refuses control and bidi characters, with 400 and no path', async () => {
    const { app, folder } = makeApp();
    const names = [
      `${'é'.repeat(130)}.txt`, // 134 characters, 264 bytes
      'invoice\u202Etxt.md', // right-to-left override
      'a\u2066b.txt', // left-to-right isolate
      'a\u200Fb.txt', // right-to-left mark
      'a\u0085b.txt', // C1 control (next line)
      'a\u2028b.txt', // line separator
    ];
    for (const name of names) {
      const r = await app.request('/api/files', {
        method: 'POST',
        headers: SAME,
        body: uploadBody([{ name, content: 'x' }]),
      });
      expect(r.status, JSON.stringify(name)).toBe(400);
      const body = (await r.json()) as ErrorBody;
      expect(body.error.code).toBe('invalid_file_name');
      expect(body.error.message).not.toContain(folder);
    }
    expect(readdirSync(join(folder, 'input'))).toEqual([]);
    // 255 bytes is the file-system limit and is accepted, whatever the character count.
    const longest = `${'a'.repeat(251)}.txt`;
    const ok = await app.request('/api/files', {
      method: 'POST',
      headers: SAME,
      body: uploadBody([{ name: longest, content: 'x' }]),
    });
    expect(ok.status).toBe(200);
    expect(readdirSync(join(folder, 'input'))).toEqual([longest]);
  });
});

describe('ui app: the page and its files', () => {
  it('serves the page, its script and style, and a favicon (no 404 on any page load)', async () => {
    const { app } = makeApp();
    const page = await app.request('/', { headers: { host: HOST } });
    expect(page.status).toBe(200);
    const html = await page.text();
    const refs = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]!);
    expect(refs).toEqual(expect.arrayContaining(['/assets/app.js', '/assets/app.css']));
    expect(html).toMatch(/rel="icon"/);
    for (const path of [...refs, '/favicon.ico']) {
      const r = await app.request(path, { headers: { host: HOST } });
      expect(r.status, path).toBe(200);
      expect(r.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    expect((await app.request('/assets/app.js')).headers.get('content-type')).toMatch(/javascript/);
    expect((await app.request('/assets/nope.js')).status).toBe(404);
    expect((await app.request('/assets/..%2Fapp.ts')).status).toBe(404);
  });
});

describe('ui app: an engine reset while a question is in flight', () => {
  it('closes the old engine only once the answer is out (a config save during a chat)', async () => {
    let release!: () => void;
    const events: string[] = [];
    let opened = 0;
    const { app, folder } = makeApp({
      openSearch: () => {
        const n = ++opened;
        let closed = false;
        return {
          answer: async () => {
            if (n === 1) await new Promise<void>((r) => (release = r));
            if (closed) throw new Error('this NodeSearch is closed');
            return {
              response: `answer ${n}`,
              responseTokens: 1,
              retrievalInfo: '',
              retrievalTokens: 1,
              items: [],
            };
          },
          close: () => {
            closed = true;
            events.push(`closed ${n}`);
          },
        };
      },
    });
    await writeState(folder, {
      ...initialState(),
      current_state: 'FINISHED',
      generation: 1,
      last_finished_generation: 1,
    });
    const ask = () =>
      app.request('/api/chat', {
        method: 'POST',
        headers: { ...SAME, 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'why?' }),
      });
    const first = ask();
    await new Promise((r) => setTimeout(r, 50));
    const saved = await app.request('/api/config', {
      method: 'POST',
      headers: { ...SAME, 'content-type': 'application/json' },
      body: JSON.stringify({ config: { dim: '64' } }),
    });
    expect(saved.status).toBe(200);
    expect(events).toEqual([]);
    // A question asked after the save opens a new engine.
    expect(((await (await ask()).json()) as { response: string }).response).toBe('answer 2');
    release();
    const r = await first;
    expect(r.status).toBe(200);
    expect(((await r.json()) as { response: string }).response).toBe('answer 1');
    expect(events).toEqual(['closed 1']);
  });
});

describe('ui app: the chat shows the structured items of the answer', () => {
  it('groups the items by node type in context order, without parsing retrievalInfo', async () => {
    let asked = '';
    const { app, folder } = makeApp({
      openSearch: () => ({
        answer: async (q) => {
          asked = q;
          return {
            response: 'an answer',
            responseTokens: 2,
            // Not parseable as a context: the sections must come from the items.
            retrievalInfo: 'opaque',
            retrievalTokens: 9,
            sources: [{ document: 'a.txt', chunks: ['c1'], items: [1], cited: [1] }],
            items: [
              { type: 'semantic_unit', text: 'unit one', document: 'a.txt' },
              { type: 'high_level_element', text: 'element', document: null },
              { type: 'semantic_unit', text: '2. looks numbered\nsecond line', document: 'b.txt' },
            ],
          };
        },
        close: () => {},
      }),
    });
    const local = await app.request('/api/config', {
      method: 'POST',
      headers: { ...SAME, 'content-type': 'application/json' },
      body: JSON.stringify({
        model_config: { service_provider: 'local', model_name: 'local' },
        embedding_config: { service_provider: 'local', embedding_model_name: 'feature-hash' },
        config: { dim: '64' },
      }),
    });
    expect(local.status).toBe(200);
    await writeState(folder, {
      ...initialState(),
      current_state: 'FINISHED',
      generation: 1,
      last_finished_generation: 1,
    });
    const r = await app.request('/api/chat', {
      method: 'POST',
      headers: { ...SAME, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'why?' }),
    });
    expect(r.status).toBe(200);
    expect(asked).toBe('why?');
    expect(await r.json()).toEqual({
      response: 'an answer',
      responseTokens: 2,
      retrievalTokens: 9,
      sections: [
        { type: 'high_level_element', items: [{ n: 2, text: 'element', document: null }] },
        {
          type: 'semantic_unit',
          items: [
            { n: 1, text: 'unit one', document: 'a.txt' },
            { n: 3, text: '2. looks numbered\nsecond line', document: 'b.txt' },
          ],
        },
      ],
      sources: [{ document: 'a.txt', chunks: ['c1'], items: [1], cited: [1] }],
    });
  });
});

describe('ui app over a real socket: a client that leaves mid-body (issue 18 item 4)', () => {
  const running: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.close()));
  });

  it('is a quiet 499 for JSON and upload bodies, logging nothing and leaving no temp file', async () => {
    const logged: unknown[] = [];
    const statuses: number[] = [];
    const { app, folder } = makeApp({ logError: (e) => logged.push(e) });
    // An outer app records the status the UI gave each request.
    const outer = new Hono();
    outer.use(async (c, next) => {
      await next();
      statuses.push(c.res.status);
    });
    outer.route('/', app);
    const s = await serveApp(outer, { host: '127.0.0.1', port: 0, graceMs: 100 });
    running.push(s);
    const host = `127.0.0.1:${s.port}`;
    const requests = [
      ['/api/chat', 'application/json', '{"question":'],
      ['/api/config', 'application/json', '{"config":'],
      [
        '/api/files',
        'multipart/form-data; boundary=b0undary',
        '--b0undary\r\nContent-Disposition: form-data; name="file"; filename="part.txt"\r\n\r\nsome',
      ],
    ] as const;
    for (const [path, type, part] of requests) {
      const socket = connect(s.port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\nContent-Type: ${type}\r\nContent-Length: 500\r\n\r\n${part}`,
      );
      await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
    }
    for (let i = 0; i < 100 && statuses.length < requests.length; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(statuses).toEqual([499, 499, 499]);
    expect(logged).toEqual([]);
    expect(readdirSync(join(folder, 'input'))).toEqual([]);
  });

  it('streams a chunked upload to disk over a real socket, and refuses one past the limit with 413', async () => {
    const { app, folder } = makeApp({ maxUploadBytes: 4_000_000 });
    const s = await serveApp(app, { host: '127.0.0.1', port: 0, graceMs: 100 });
    running.push(s);
    const host = `127.0.0.1:${s.port}`;
    const send = (name: string, size: number) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: s.port,
            method: 'POST',
            path: '/api/files',
            headers: { host, origin: `http://${host}`, 'content-type': 'multipart/form-data; boundary=B' },
          },
          (res) => {
            let body = '';
            res.on('data', (d) => {
              body += d;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.write(`--B\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\n`);
        let sent = 0;
        const pump = () => {
          while (sent < size) {
            const n = Math.min(65_536, size - sent);
            const chunk = Buffer.alloc(n, 48 + ((sent / 65_536) % 10));
            sent += n;
            if (!req.write(chunk)) {
              req.once('drain', pump);
              return;
            }
          }
          req.end('\r\n--B--\r\n');
        };
        pump();
      });
    const ok = await send('big.txt', 3_000_000);
    expect(ok.status).toBe(200);
    const written = readFileSync(join(folder, 'input', 'big.txt'));
    expect(written.length).toBe(3_000_000);
    expect(written.subarray(65_536 * 5, 65_536 * 5 + 3).toString()).toBe('555');
    const tooBig = await send('huge.txt', 40_000_000);
    expect(tooBig.status).toBe(413);
    expect(JSON.parse(tooBig.body).error.code).toBe('file_too_large');
    expect(readdirSync(join(folder, 'input'))).toEqual(['big.txt']);
  });
});

describe('ui app: API key', () => {
  const KEY = 'ui-key-0123456789abcdef';

  it('requires the key on every /api route; the page itself stays open so the key can be typed', async () => {
    const { app } = makeApp({ apiKey: KEY });
    const page = await app.request('/', { headers: { host: HOST } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('id="api-key"');
    for (const [path, init] of [
      ['/api/status', { headers: { host: HOST } }],
      ['/api/build/events', { headers: { host: HOST } }],
      ['/api/build', { method: 'POST', headers: SAME }],
    ] as const) {
      const none = await app.request(path, init);
      expect(none.status).toBe(401);
      expect(((await none.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      const wrong = await app.request(path, {
        ...init,
        headers: { ...init.headers, authorization: 'Bearer not-the-key-at-all-000' },
      });
      expect(wrong.status).toBe(401);
    }
    const ok = await app.request('/api/status', { headers: { host: HOST, authorization: `Bearer ${KEY}` } });
    expect(ok.status).toBe(200);
  });

  it('needs no key when started without one', async () => {
    const { app } = makeApp();
    expect((await app.request('/api/status', { headers: { host: HOST } })).status).toBe(200);
  });
});
