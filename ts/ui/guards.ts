/**
 * Request guards of the web UI: the Host and same-origin checks, and the rules an uploaded
 * file name must pass before anything is written under input/.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function hostName(host: string): string {
  // "[::1]:8080" → "[::1]", "127.0.0.1:8080" → "127.0.0.1"
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const i = host.lastIndexOf(':');
  return i < 0 ? host : host.slice(0, i);
}

/**
 * Why a request's Host is refused, or null. Every API route checks it: a page on another
 * site that rebinds its DNS name to 127.0.0.1 reaches the app under its own name, not ours.
 */
export function hostProblem(host: string | undefined): string | null {
  if (!LOOPBACK_HOSTS.has(hostName(host ?? '').toLowerCase())) {
    return `Host "${host ?? ''}" is not this app's loopback address`;
  }
  return null;
}

/**
 * Why a state-changing request is refused, or null when it comes from the app's own page.
 * Browsers send `Sec-Fetch-Site` (and `Origin` on every POST); a cross-site page cannot
 * forge either. A request that shows neither is refused too: the UI never sends one.
 * The Host must be a loopback name, so a DNS-rebound name cannot pass as "same origin".
 */
export function originProblem(headers: {
  host?: string;
  origin?: string;
  secFetchSite?: string;
}): string | null {
  const host = headers.host ?? '';
  const wrongHost = hostProblem(host);
  if (wrongHost) return wrongHost;
  const site = headers.secFetchSite?.toLowerCase();
  if (site !== undefined && site !== 'same-origin') {
    return `Sec-Fetch-Site is "${site}"; only the app's own page may change its state`;
  }
  if (headers.origin === undefined) {
    if (site === 'same-origin') return null;
    return "the request shows no Origin; only the app's own page may change its state";
  }
  if (headers.origin !== `http://${host}`) {
    return `Origin "${headers.origin}" is not this app (http://${host})`;
  }
  return null;
}

/** The longest file name Linux, macOS and Windows file systems all take: 255 bytes in UTF-8. */
export const MAX_NAME_BYTES = 255;

/**
 * Characters a file name may not hold: control characters (C0, DEL, C1), the invisible
 * bidirectional-text controls (an RLO inside `report<U+202E>fdp.txt` shows it as
 * `reporttxt.pdf`) and the line and paragraph separators.
 */
const FORBIDDEN_CHAR = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Checks an uploaded file's name: one plain file name (no folders, no `..`, not hidden), at
 * most 255 bytes in UTF-8, without control or bidirectional-text characters, with an
 * extension `allowed` admits. Returns the problem or null. Names are refused rather than
 * rewritten so the file on disk has the name the user sees; a refused name is quoted only
 * when it holds no invisible character.
 */
export function fileNameProblem(name: string, allowed: ReadonlySet<string>): string | null {
  if (name.length === 0) return 'the file has no name';
  const forbidden = FORBIDDEN_CHAR.exec(name);
  if (forbidden) {
    return `a file name contains ${codePoint(forbidden[0])}, a control or bidirectional-text character`;
  }
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    return `the file name is ${bytes} bytes in UTF-8; the limit is ${MAX_NAME_BYTES}`;
  }
  if (name.includes('/') || name.includes('\\')) return `"${name}" contains a folder separator`;
  if (name === '.' || name === '..' || name.startsWith('.')) return `"${name}" is a hidden or relative name`;
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot).toLowerCase();
  if (!allowed.has(ext)) {
    return `"${name}": only ${[...allowed].join(', ')} files can be indexed`;
  }
  return null;
}
