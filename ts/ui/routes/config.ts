/**
 * GET /api/config: the form's values, choices and warnings (API keys only as set / not set).
 * POST /api/config: saves the form into Node_config.yaml keeping its comments, or 422 with
 * the problems by key path; refused while a build runs.
 */
import { Hono } from 'hono';
import {
  type ConfigPatch,
  isUnsetApiKey,
  LANGUAGES,
  PROVIDERS,
  readConfigForForm,
  updateConfigFile,
} from '../../config/index.js';
import { ConfigError } from '../../errors.js';
import { buildLockHolder } from '../../indexing/lock.js';
import { HttpError, readJsonObject } from '../../server/http.js';
import type { ConfigReply, ConfigSaveReply, ConfigValues } from '../api-types.js';
import type { UiContext } from '../ui-context.js';

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

export function patchFrom(body: Record<string, unknown>): ConfigPatch {
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

/** The body must hold at least one form section, each an object; else 400 naming them. */
function formSections(body: Record<string, unknown>): Record<string, unknown> {
  const expected = `expected an object with at least one of the sections ${SECTIONS.join(', ')}`;
  const given = SECTIONS.filter((s) => s in body);
  if (given.length === 0) {
    const keys = Object.keys(body);
    const got = keys.length === 0 ? 'an empty object' : `the keys ${keys.map((k) => `"${k}"`).join(', ')}`;
    throw new HttpError(400, 'invalid_body', `POST /api/config: ${expected}; got ${got}`);
  }
  for (const s of given) {
    const v = body[s];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw new HttpError(400, 'invalid_body', `POST /api/config: "${s}" must be an object of its fields`);
    }
  }
  return body;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The form's values from each section's values (anything not a plain value shows as empty). */
function formValues(sectionOf: (section: Section) => Record<string, unknown>): ConfigValues {
  const values: ConfigValues = {};
  for (const section of SECTIONS) {
    const s = sectionOf(section);
    values[section] = Object.fromEntries(
      FORM_FIELDS[section].map((k) => {
        const v = s[k];
        return [k, typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : null];
      }),
    );
  }
  return values;
}

/** Whether a section of the file as written holds an API key (never the key itself). */
function keyWritten(section: unknown): boolean {
  return isObject(section) && !isUnsetApiKey(typeof section.api_keys === 'string' ? section.api_keys : null);
}

export function configRoutes(ctx: UiContext): Hono {
  return new Hono()
    .get('/config', (c) => {
      let config: ReturnType<UiContext['loadConfig']>;
      try {
        config = ctx.loadConfig();
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        // A file that does not load (a value out of range) is shown as written, with its
        // problems next to their fields, so it can be fixed here; one that is not YAML at all
        // is refused (422) as before.
        const { raw, problems } = readConfigForForm(ctx.root);
        return c.json<ConfigReply>({
          values: formValues((section) => (isObject(raw[section]) ? raw[section] : {})),
          apiKeySet: {
            model_config: keyWritten(raw.model_config),
            embedding_config: keyWritten(raw.embedding_config),
          },
          choices: { service_provider: PROVIDERS, language: LANGUAGES },
          warnings: [],
          problems,
        });
      }
      const values = formValues((section) => config[section] as unknown as Record<string, unknown>);
      return c.json<ConfigReply>({
        values,
        apiKeySet: {
          model_config: config.apiKey('model_config') !== undefined,
          embedding_config: config.apiKey('embedding_config') !== undefined,
        },
        choices: { service_provider: PROVIDERS, language: LANGUAGES },
        warnings: config.warnings,
      });
    })
    .post('/config', async (c) => {
      const body = await readJsonObject(c);
      // Checked once the body is in: a build may have started while it was read.
      if (ctx.job.running) {
        throw new HttpError(409, 'build_running', 'a build is running; save the config after it ends');
      }
      const other = await buildLockHolder(ctx.root);
      if (other) {
        throw new HttpError(
          409,
          'build_running',
          `a build is running in another process (pid ${other.pid}); save the config after it ends`,
        );
      }
      const result = updateConfigFile(ctx.root, patchFrom(formSections(body)));
      if (!result.ok) {
        const n = result.problems.length;
        throw new HttpError(
          422,
          'invalid_config',
          `Not saved: ${n} field${n === 1 ? '' : 's'} need${n === 1 ? 's' : ''} fixing`,
          { problems: result.problems },
        );
      }
      ctx.resetSearch();
      return c.json<ConfigSaveReply>({ ok: true, warnings: result.config.warnings });
    });
}
