/**
 * Request guards of the web UI: the same-origin check for state-changing requests and the
 * rules an uploaded file name must pass before anything is written under input/.
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

/**
 * Checks an uploaded file's name: one plain file name (no folders, no `..`, no hidden or
 * control characters), with an extension `allowed` admits. Returns the problem or null.
 * Names are refused rather than rewritten so the file on disk has the name the user sees.
 */
export function fileNameProblem(name: string, allowed: ReadonlySet<string>): string | null {
  if (name.length === 0) return 'the file has no name';
  if (name.length > 200) return `the file name is longer than 200 characters`;
  if (name.includes('/') || name.includes('\\')) return `"${name}" contains a folder separator`;
  if (name === '.' || name === '..' || name.startsWith('.')) return `"${name}" is a hidden or relative name`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(name)) return `"${name}" contains control characters`;
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot).toLowerCase();
  if (!allowed.has(ext)) {
    return `"${name}": only ${[...allowed].join(', ')} files can be indexed`;
  }
  return null;
}
