/**
 * Request guards of the web UI: the Host (ts/server/host-guard.ts, shared with the search
 * server) and same-origin checks. The rules an uploaded file name must pass live with the
 * upload, in ts/server/file-names.ts.
 */
import { hostProblem } from '../server/host-guard.js';

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
