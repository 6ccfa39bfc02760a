/**
 * Content-addressed keys of the response cache (docs/method.md §3.10): SHA-256 of the canonical
 * JSON (object keys sorted, no whitespace) of {cache version, provider, base_url, model,
 * kind, request, params}. The API key never enters it.
 */
import { createHash } from 'node:crypto';
import type { ProviderIdentity } from './types.js';

/** Bump when the meaning of a cached reply changes (prompt layout, validation). */
export const CACHE_VERSION = 1;

export type CacheKind = 'chat' | 'structured' | 'embedding';

/** JSON with object keys sorted at every level and no whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    if (s === undefined) throw new TypeError(`cannot encode ${typeof value} as canonical JSON`);
    return s;
  }
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The 32-byte key. */
export function cacheKey(identity: ProviderIdentity, kind: CacheKind, request: unknown): Buffer {
  const doc = {
    version: CACHE_VERSION,
    provider: identity.provider,
    base_url: identity.baseUrl,
    model: identity.model,
    kind,
    request,
    params: identity.params,
  };
  return createHash('sha256').update(canonicalJson(doc), 'utf8').digest();
}
