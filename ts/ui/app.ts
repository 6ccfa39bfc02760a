/**
 * The web UI as a Hono app factory (no listening here; ts/cli/ui.ts serves it). The page and
 * its script come from ./assets.ts; everything else is a JSON API under /api with errors as
 * `{"error": {"code", "message", "problems"?}}`. Requests that change state (save, upload,
 * build) must come from the app's own page (./guards.ts originProblem).
 *
 * The build, the search engine and the index statistics are injected (./deps.ts has the real
 * ones), so the routes are tested with `app.request()` without the native addon.
 */
import { existsSync } from 'node:fs';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import {
  type ConfigPatch,
  ensureConfig,
  LANGUAGES,
  NodeConfig,
  PROVIDERS,
  updateConfigFile,
} from '../config/index.js';
import { ConfigError } from '../errors.js';
import { allowedExtensions, type DocuType, discoverDocuments } from '../indexing/discover.js';
import { readDocumentHashes, readIndices } from '../indexing/info-files.js';
import { INPUT_DIR } from '../project/layout.js';
import { isSearchable, readState } from '../project/state.js';
import type { AnswerResult } from '../search/engine-types.js';
import { APP_CSS, APP_JS, PAGE_HTML } from './assets.js';
import { BuildJob, type BuildRunner } from './build-job.js';
import { splitContext } from './context-sections.js';
import { fileNameProblem, hostProblem, originProblem } from './guards.js';

export const DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
const MAX_QUESTION_CHARS = 4000;

/** What the chat needs from a search engine (NodeSearch fits). */
export interface UiSearch {
  answer(question: string): Promise<AnswerResult>;
  close(): void;
}

export interface UiDeps {
  /** Absolute project folder. */
  folder: string;
  /** Runs one build of `folder` writing its output to the sinks; resolves to its exit code. */
  runBuild: BuildRunner;
  /** A search engine for the current config (re-created after a save or a build). */
  openSearch: (config: NodeConfig) => UiSearch;
  /** Edge count of the built graph, or null when unknown. */
  countEdges: (folder: string) => Promise<number | null>;
  /** Largest accepted upload, per file and per request (default 20 MiB). */
  maxUploadBytes?: number;
  logError?: (e: unknown) => void;
}

class UiError extends Error {
  constructor(
    readonly status: 400 | 403 | 409 | 413 | 415 | 422 | 500 | 503,
    readonly code: string,
    message: string,
    readonly problems?: { path: string; message: string }[],
  ) {
    super(message);
  }
}

/** The form's fields: [section, key]. The API keys are write-only and handled apart. */
const FORM_FIELDS = {
  model_config: ['service_provider', 'model_name', 'base_url'],
  embedding_config: ['service_provider', 'embedding_model_name', 'base_url'],
  config: [
    'language',
    'docu_type',
    'chunk_size',
    'dim',
    'cross_node',
    'Enode',
    'Rnode',
    'Hnode',
    'HNSW_results',
  ],
} as const;
type Section = keyof typeof FORM_FIELDS;
const SECTIONS = Object.keys(FORM_FIELDS) as Section[];
const INT_KEYS = new Set(['chunk_size', 'dim', 'cross_node', 'Enode', 'Rnode', 'Hnode', 'HNSW_results']);

/** Form text → config value: integers where the schema wants them (bad text is left for it to report). */
function formValue(key: string, raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  const text = raw.trim();
  if (key === 'base_url') return text === '' ? null : text;
  if (INT_KEYS.has(key) && /^-?\d+$/.test(text)) return Number(text);
  return text;
}

function patchFrom(body: Record<string, unknown>): ConfigPatch {
  const patch: Record<string, Record<string, unknown>> = {};
  for (const section of SECTIONS) {
    const values = body[section];
    if (typeof values !== 'object' || values === null) continue;
    const out: Record<string, unknown> = {};
    const v = values as Record<string, unknown>;
    for (const key of FORM_FIELDS[section]) if (key in v) out[key] = formValue(key, v[key]);
    // Write-only: an empty field keeps the key already in the file.
    if (section !== 'config' && typeof v.api_keys === 'string' && v.api_keys.trim() !== '') {
      out.api_keys = v.api_keys.trim();
    }
    patch[section] = out;
  }
  return patch as ConfigPatch;
}

async function readJson(c: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new UiError(400, 'invalid_json', 'the body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new UiError(400, 'invalid_body', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

export function createUiApp(deps: UiDeps): Hono {
  const root = deps.folder;
  const maxUpload = deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  const logError = deps.logError ?? ((e: unknown) => console.error(e));
  ensureConfig(root);
  const job = new BuildJob(deps.runBuild);
  let search: UiSearch | null = null;
  const resetSearch = () => {
    search?.close();
    search = null;
  };

  /** The config as saved, or a UiError naming its problems. */
  const loadConfig = (requireApiKeys = false): NodeConfig => {
    try {
      return NodeConfig.fromMainFolder(root, { requireApiKeys });
    } catch (e) {
      if (e instanceof ConfigError) throw new UiError(422, 'invalid_config', e.message);
      throw e;
    }
  };

  const app = new Hono();

  app.onError((e, c) => {
    if (e instanceof UiError) {
      return c.json({ error: { code: e.code, message: e.message, problems: e.problems } }, e.status);
    }
    logError(e);
    const message = e instanceof Error ? e.message : String(e);
    return c.json({ error: { code: 'internal_error', message } }, 500);
  });

  app.use('/api/*', async (c, next) => {
    const wrongHost = hostProblem(c.req.header('host'));
    if (wrongHost) throw new UiError(403, 'wrong_host', `refused: ${wrongHost}`);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const problem = originProblem({
        host: c.req.header('host'),
        origin: c.req.header('origin'),
        secFetchSite: c.req.header('sec-fetch-site'),
      });
      if (problem) throw new UiError(403, 'cross_origin', `refused: ${problem}`);
    }
    await next();
  });

  const page = (body: string, type: string) => (c: Context) =>
    c.body(body, 200, {
      'content-type': type,
      'cache-control': 'no-store',
      // Only the app's own script and style; no inline code, nothing from elsewhere.
      'content-security-policy':
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
    });
  app.get('/', page(PAGE_HTML, 'text/html; charset=utf-8'));
  app.get('/assets/app.js', page(APP_JS, 'text/javascript; charset=utf-8'));
  app.get('/assets/app.css', page(APP_CSS, 'text/css; charset=utf-8'));

  app.get('/api/status', async (c) => {
    const state = await readState(root);
    const finished = state !== null && state.current_state === 'FINISHED' && state.error_type === 'NO_ERROR';
    return c.json({
      folder: root,
      building: job.running,
      state: state?.current_state ?? null,
      errorType: state?.error_type ?? null,
      errorMessage: state?.error_message ?? null,
      generation: state?.last_finished_generation ?? 0,
      // A finished generation can be searched even while the next cycle is being built.
      searchable: (state?.last_finished_generation ?? 0) > 0,
      status: job.running ? 'Building' : finished ? 'Finished' : state ? state.current_state : 'Not built',
    });
  });

  app.get('/api/config', (c) => {
    const config = loadConfig();
    const values: Record<string, Record<string, unknown>> = {};
    for (const section of SECTIONS) {
      const s = config[section] as unknown as Record<string, unknown>;
      values[section] = Object.fromEntries(FORM_FIELDS[section].map((k) => [k, s[k] ?? null]));
    }
    return c.json({
      values,
      // Never the key itself: only whether one is set (file or environment).
      apiKeySet: {
        model_config: config.apiKey('model_config') !== undefined,
        embedding_config: config.apiKey('embedding_config') !== undefined,
      },
      choices: { service_provider: PROVIDERS, language: LANGUAGES },
      warnings: config.warnings,
    });
  });

  app.post('/api/config', async (c) => {
    if (job.running)
      throw new UiError(409, 'build_running', 'a build is running; save the config after it ends');
    const result = updateConfigFile(root, patchFrom(await readJson(c)));
    if (!result.ok) {
      const n = result.problems.length;
      throw new UiError(
        422,
        'invalid_config',
        `Not saved: ${n} field${n === 1 ? '' : 's'} need${n === 1 ? 's' : ''} fixing`,
        result.problems,
      );
    }
    resetSearch();
    return c.json({ ok: true, warnings: result.config.warnings });
  });

  app.get('/api/files', async (c) => {
    const config = loadConfig();
    const inputDir = join(root, INPUT_DIR);
    const docuType = config.config.docu_type as DocuType;
    const plan = await discoverDocuments(inputDir, docuType, await readDocumentHashes(root));
    const status = new Map<string, string>();
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
    return c.json({
      files,
      deleted: plan.deleted,
      unreadable: plan.unreadable.map((u) => u.path),
      accepted: [...allowedExtensions(docuType)],
      maxUploadBytes: maxUpload,
    });
  });

  app.post('/api/files', async (c) => {
    const declared = Number(c.req.header('content-length') ?? '0');
    // Multipart framing adds a little; the per-file check below is the exact one.
    if (declared > maxUpload + 64 * 1024) throw tooLarge(maxUpload);
    const overwrite = c.req.query('overwrite') === '1';
    const config = loadConfig();
    const allowed = allowedExtensions(config.config.docu_type as DocuType);
    let form: Record<string, unknown>;
    try {
      form = await c.req.parseBody({ all: true });
    } catch {
      throw new UiError(400, 'invalid_body', 'expected a multipart/form-data body with files in "file"');
    }
    const raw = form.file;
    const files = (Array.isArray(raw) ? raw : [raw]).filter((f): f is File => f instanceof File);
    if (files.length === 0) throw new UiError(400, 'no_files', 'no files in the "file" field');
    const inputDir = join(root, INPUT_DIR);
    const existing = new Set(existsSync(inputDir) ? await readdir(inputDir) : []);
    // Check every file before writing any, so a refused batch leaves input/ unchanged.
    for (const f of files) {
      const problem = fileNameProblem(f.name, allowed);
      if (problem) {
        const wrongType = problem.includes('can be indexed');
        throw new UiError(
          wrongType ? 415 : 400,
          wrongType ? 'unsupported_file_type' : 'invalid_file_name',
          problem,
        );
      }
      if (f.size > maxUpload) throw tooLarge(maxUpload, f.name);
      if (existing.has(f.name) && !overwrite) {
        throw new UiError(409, 'file_exists', `"${f.name}" already exists in input/; confirm to replace it`);
      }
    }
    const written: string[] = [];
    for (const f of files) {
      const bytes = new Uint8Array(await f.arrayBuffer());
      try {
        await writeFile(join(inputDir, f.name), bytes, { flag: overwrite ? 'w' : 'wx' });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST')
          throw new UiError(
            409,
            'file_exists',
            `"${f.name}" already exists in input/; confirm to replace it`,
          );
        throw e;
      }
      written.push(f.name);
    }
    return c.json({ ok: true, written });
  });

  app.post('/api/build', (c) => {
    const started = job.start(async () => {
      resetSearch();
    });
    if (!started) throw new UiError(409, 'build_running', 'a build is already running; wait for it to end');
    return c.json({ ok: true, started: true }, 202);
  });

  app.get('/api/build/events', (c) =>
    streamSSE(c, async (stream) => {
      const queue = [...job.history];
      let wake: (() => void) | null = null;
      const unsubscribe = job.subscribe((e) => {
        queue.push(e);
        wake?.();
      });
      stream.onAbort(() => {
        unsubscribe();
        wake?.();
      });
      try {
        for (;;) {
          while (queue.length > 0) {
            const e = queue.shift()!;
            await stream.writeSSE({ event: e.kind, data: JSON.stringify(e) });
          }
          if (stream.aborted || stream.closed) break;
          let timer: NodeJS.Timeout | undefined;
          await new Promise<void>((r) => {
            wake = r;
            // A comment every 15 s keeps proxies and the browser from timing the stream out.
            timer = setTimeout(r, 15_000);
          });
          clearTimeout(timer);
          wake = null;
          if (queue.length === 0 && !stream.aborted) await stream.write(': keep-alive\n\n');
        }
      } finally {
        unsubscribe();
      }
    }),
  );

  app.get('/api/indices', async (c) => {
    const state = await readState(root);
    if (!state || !isSearchable(state)) throw new UiError(503, 'index_not_built', 'no finished build yet');
    const counters = await readIndices(root);
    return c.json({
      documents: counters.document_index,
      chunks: counters.text_unit_index,
      edges: await deps.countEdges(root),
      nodeTypes: {
        semantic_unit: counters.semantic_unit_index,
        entity: counters.entity_index,
        relationship: counters.relation_index,
        attribute: counters.attribute_index,
        community: counters.community_summary_index,
        high_level_element: counters.high_level_element_index,
      },
    });
  });

  app.post('/api/chat', async (c) => {
    const body = await readJson(c);
    const question = typeof body.question === 'string' ? body.question.trim() : '';
    if (question === '') throw new UiError(400, 'empty_question', 'type a question first');
    if (question.length > MAX_QUESTION_CHARS)
      throw new UiError(
        400,
        'question_too_long',
        `questions are limited to ${MAX_QUESTION_CHARS} characters`,
      );
    const state = await readState(root);
    if (!state || !isSearchable(state)) throw new UiError(503, 'index_not_built', 'build the index first');
    search ??= deps.openSearch(loadConfig(true));
    const r = await search.answer(question);
    return c.json({
      response: r.response,
      responseTokens: r.responseTokens,
      retrievalTokens: r.retrievalTokens,
      sections: splitContext(r.retrievalInfo),
    });
  });

  return app;
}

function tooLarge(max: number, name?: string): UiError {
  const mib = (max / (1024 * 1024)).toFixed(max < 1024 * 1024 ? 3 : 0);
  return new UiError(
    413,
    'file_too_large',
    `${name ? `"${name}" is` : 'the upload is'} larger than ${mib} MiB`,
  );
}
