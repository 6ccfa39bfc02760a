/**
 * The Host check of servers that answer without an API key on a loopback address (the web UI
 * always; `noderag search` when it has no key). A page on another site can rebind its DNS name
 * to 127.0.0.1 and then reach such a server from the browser as "same origin": the request
 * arrives under the attacker's name, never under a loopback one, so refusing every other
 * Host closes that door. (With a key the page cannot authenticate, so no check is needed.)
 */
import type { MiddlewareHandler } from 'hono';
import { HttpError } from './http.js';

const LOOPBACK_NAMES = new Set(['localhost', '[::1]']);

/** "[::1]:8080" → "[::1]", "127.0.0.1:8080" → "127.0.0.1" (lowercase). */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const i = host.lastIndexOf(':');
  return (i < 0 ? host : host.slice(0, i)).toLowerCase();
}

/** Why a request's Host is refused, or null: it must name a loopback address. */
export function hostProblem(host: string | undefined): string | null {
  const name = hostName(host ?? '');
  if (LOOPBACK_NAMES.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) return null;
  return `Host "${host ?? ''}" is not this server's loopback address`;
}

/** Refuses (403 `wrong_host`) a request whose Host is not a loopback name. */
export function requireLoopbackHost(hint: string): MiddlewareHandler {
  return (c, next) => {
    const problem = hostProblem(c.req.header('host'));
    if (problem) throw new HttpError(403, 'wrong_host', `${problem}; ${hint}`);
    return next();
  };
}
