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

/**
 * The canonical JSON of a key's document up to its request, with the comma after its last
 * field: all its keys sort before "request", and only "version" after it, so the document
 * is this head, the request's canonical JSON and a fixed tail. Kept per identity and kind:
 * a build makes thousands of keys (one per embedded text) from the same few, and an
 * identity is never changed once its provider is made (its fields are readonly).
 */
const heads = new WeakMap<ProviderIdentity, Map<CacheKind, string>>();

function keyHead(identity: ProviderIdentity, kind: CacheKind): string {
  let byKind = heads.get(identity);
  if (!byKind) {
    byKind = new Map();
    heads.set(identity, byKind);
  }
  let head = byKind.get(kind);
  if (head === undefined) {
    const fields = canonicalJson({
      provider: identity.provider,
      // `…/v1` and `…/v1/` are one server: a trailing slash must not pay every reply again.
      base_url: identity.baseUrl?.replace(/\/+$/, '') ?? identity.baseUrl,
      model: identity.model,
      kind,
      params: identity.params,
    });
    head = fields === '{}' ? '{' : `${fields.slice(0, -1)},`;
    byKind.set(kind, head);
  }
  return head;
}

/** The 32-byte key: SHA-256 of canonicalJson({version, provider, base_url, model, kind, request, params}). */
export function cacheKey(identity: ProviderIdentity, kind: CacheKind, request: unknown): Buffer {
  const hash = createHash('sha256').update(keyHead(identity, kind), 'utf8');
  // An undefined request is left out, as canonicalJson leaves out every undefined value.
  if (request !== undefined) hash.update(`"request":${canonicalJson(request)},`, 'utf8');
  return hash.update(`"version":${CACHE_VERSION}}`, 'utf8').digest();
}
