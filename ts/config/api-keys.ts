/**
 * Where API keys come from (docs/method.md §7.6): the file's `api_keys`, unless it is null, empty
 * or the placeholder `<API_KEY>`; then OPENAI_API_KEY for openai, GEMINI_API_KEY and then
 * GOOGLE_API_KEY for gemini. `local` needs none.
 */
import { API_KEY_PLACEHOLDER } from './fields.js';
import type { ProviderName } from './schema.js';

export type Env = Readonly<Record<string, string | undefined>>;

export const API_KEY_ENV_VARS: Readonly<Record<ProviderName, readonly string[]>> = {
  openai: ['OPENAI_API_KEY'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  local: [],
};

export function isUnsetApiKey(value: string | null | undefined): boolean {
  if (value === null || value === undefined) return true;
  const v = value.trim();
  return v === '' || v === API_KEY_PLACEHOLDER;
}

export interface ResolvedApiKey {
  key: string | undefined;
  /** `file` or the environment variable's name; undefined when no key was found. */
  source: string | undefined;
  /** `api_keys: ${NAME}` naming a variable that is not set: NAME. */
  unsetReference?: string;
}

/**
 * `${NAME}` (as GraphRAG's settings and docker compose write it), or `$NAME` as a shell
 * would: the key is in $NAME (no provider's key starts with a dollar sign).
 */
const ENV_REFERENCE = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/;

export function resolveApiKey(provider: ProviderName, fileValue: string | null, env: Env): ResolvedApiKey {
  if (provider === 'local') return { key: undefined, source: undefined };
  const match = ENV_REFERENCE.exec((fileValue ?? '').trim());
  const reference = match?.[1] ?? match?.[2];
  if (reference !== undefined) {
    const v = env[reference];
    return isUnsetApiKey(v)
      ? { key: undefined, source: undefined, unsetReference: reference }
      : { key: (v as string).trim(), source: reference };
  }
  if (!isUnsetApiKey(fileValue)) return { key: (fileValue as string).trim(), source: 'file' };
  for (const name of API_KEY_ENV_VARS[provider]) {
    const v = env[name];
    if (!isUnsetApiKey(v)) return { key: (v as string).trim(), source: name };
  }
  return { key: undefined, source: undefined };
}

/** "api_keys or OPENAI_API_KEY" / "api_keys or GEMINI_API_KEY / GOOGLE_API_KEY". */
export function apiKeyHint(provider: ProviderName): string {
  const vars = API_KEY_ENV_VARS[provider];
  return vars.length ? `api_keys or ${vars.join(' / ')}` : 'api_keys';
}
