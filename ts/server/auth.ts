/**
 * API-key authentication and CORS for the search server (issue 16 item 4).
 *
 * With a key, every route but `/health` needs `Authorization: Bearer KEY`; anything else is
 * 401 `{"error": {"code": "unauthorized", …}}` with `WWW-Authenticate: Bearer`. The
 * comparison is constant-time in the key (sameKey). The key is never logged nor echoed.
 *
 * CORS is off by default (no CORS headers, so browsers on other origins cannot read
 * replies); `cors: ORIGIN` allows that one origin, preflights included (answered before the
 * key check, as browsers send them without credentials).
 */
import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { HttpError } from './http.js';

/** The shortest key `noderag search` accepts. */
export const MIN_API_KEY_LENGTH = 16;

/** Why a key cannot be used, or null. */
export function apiKeyProblem(key: string): string | null {
  if (key.length < MIN_API_KEY_LENGTH)
    return `must be at least ${MIN_API_KEY_LENGTH} characters (got ${key.length})`;
  if (/[^\x21-\x7e]/.test(key)) return 'must be printable ASCII without spaces';
  return null;
}

/**
 * Whether `given` is the key, in a time that tells nothing of the key: `timingSafeEqual` always
 * runs over the key's whole length, whether or not the lengths match and wherever the first
 * difference is (only the encoding of `given`, which its sender knows, takes its own time).
 * Cheaper than hashing both sides (a SHA-256 object per request was most of the check's cost).
 */
export function sameKey(given: string, expected: Buffer): boolean {
  const bytes = Buffer.from(given, 'utf8');
  const sameLength = bytes.length === expected.length;
  return timingSafeEqual(sameLength ? bytes : expected, expected) && sameLength;
}

/** Paths open without a key. */
const OPEN_PATHS = new Set(['/health']);

export function requireApiKey(key: string): MiddlewareHandler {
  const expected = Buffer.from(key, 'utf8');
  // Not async: the chain awaits the promise returned, so an async wrapper was one more per request.
  return (c, next) => {
    if (OPEN_PATHS.has(c.req.path) || c.req.method === 'OPTIONS') return next();
    const header = c.req.header('authorization');
    if (header === undefined) {
      throw unauthorized('this server needs an API key: send the header "Authorization: Bearer <key>"');
    }
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!m) throw unauthorized('the Authorization header must be "Bearer <key>"');
    if (!sameKey(m[1]!, expected)) throw unauthorized('the API key is not valid');
    return next();
  };
}

function unauthorized(message: string): HttpError {
  return new HttpError(401, 'unauthorized', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

/** Whether `origin` is a plain origin (scheme://host[:port], nothing else). */
export function corsOriginProblem(origin: string): string | null {
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return 'expected an origin such as https://app.example.com';
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== origin.replace(/\/$/, '')) {
    return 'expected an origin such as https://app.example.com (scheme, host and port only)';
  }
  return null;
}

/** Reply headers a page on the allowed origin may read (besides the CORS-safelisted ones). */
const EXPOSED_HEADERS = 'X-Request-Id, X-Noderag-Project';

/** CORS for one allowed origin; requests from other origins get no CORS headers. */
export function corsFor(origin: string): MiddlewareHandler {
  const allowed = origin.replace(/\/$/, '');
  return async (c, next) => {
    const from = c.req.header('origin');
    if (from !== allowed) return next();
    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
      // The headers the page asks to send are allowed, whatever they are: the origin is the
      // one configured, and the key still decides. The openai SDK sends X-Stainless-* headers
      // of its own; naming two allowed ones blocked every request it made from a browser.
      const asked = c.req.header('access-control-request-headers');
      return c.body(null, 204, {
        'Access-Control-Allow-Origin': allowed,
        'Access-Control-Allow-Methods': 'GET, HEAD, POST, DELETE, OPTIONS',
        'Access-Control-Allow-Headers':
          asked && /^[\w\-, ]+$/.test(asked) ? asked : 'Authorization, Content-Type',
        'Access-Control-Max-Age': '600',
        Vary: 'Origin, Access-Control-Request-Headers',
      });
    }
    try {
      await next();
    } finally {
      c.res.headers.set('Access-Control-Allow-Origin', allowed);
      c.res.headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      c.res.headers.append('Vary', 'Origin');
    }
  };
}
