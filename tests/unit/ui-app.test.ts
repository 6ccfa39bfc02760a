/**
 * Routes of the web UI through app.request(): the same-origin guard, upload guards
 * (traversal names, wrong types, oversize, overwrite), config save validation, the
 * build lock and the context split. Builds and search are fakes; no addon is loaded.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sectionHeader } from '../../ts/search/context.js';
import { createUiApp, type UiDeps } from '../../ts/ui/app.js';
import { splitContext } from '../../ts/ui/context-sections.js';
import { originProblem } from '../../ts/ui/guards.js';

const HOST = '127.0.0.1:8501';
const ORIGIN = `http://${HOST}`;
const SAME = { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'same-origin' };

function makeApp(over: Partial<UiDeps> = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'noderag-ui-'));
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

  it('splits a context string into its sections by node type', () => {
    const ctx = `${sectionHeader('attribute')}\n1. Alice: a person\n2. Bob\nsecond line\n\n${sectionHeader('text')}\n1. chunk 10. not a new item\n\n`;
    expect(splitContext(ctx)).toEqual([
      { type: 'attribute', items: ['Alice: a person', 'Bob\nsecond line'] },
      { type: 'text', items: ['chunk 10. not a new item'] },
    ]);
    expect(splitContext('')).toEqual([]);
  });
});
