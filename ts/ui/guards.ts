/**
 * Request guards of the web UI: the Host and same-origin checks. The rules an uploaded file
 * name must pass live with the upload, in ts/server/file-names.ts.
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
