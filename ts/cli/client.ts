/**
 * The terminal client's HTTP side (docs/method.md §7.3): picks the route from -r/-a, posts the
 * question, and turns the reply into the text to print; or reads a streamed answer. Failures become CliExit with one
 * clear line; the caller prints and exits.
 */
import { type Citation, type Source, sourceList } from '../search/sources.js';
import { PROJECT_HEADER } from '../server/project-header.js';
import { CliExit, EXIT } from './exit.js';
import { sseData } from './sse.js';

export interface ClientRequest {
  host: string;
  port: number;
  question: string;
  retrieval: boolean;
  answer: boolean;
  timeoutMs: number;
  /** How to tell the user to start the server, e.g. `noderag search -f ./proj`. */
  startHint: string;
  /** Sent as `Authorization: Bearer <key>` (the CLI reads NODERAG_API_KEY). */
  apiKey?: string;
  /** The name of the `-f` folder: a server serving another project is warned about. */
  project?: string;
}

/**
 * Warns (stderr) when the server says it serves another project than `-f` names: two
 * projects left at the default port answer for each other without a word otherwise.
 */
function checkProject(req: ClientRequest, res: Response): void {
  const served = res.headers.get(PROJECT_HEADER);
  if (req.project === undefined || served === null) return;
  let name: string;
  try {
    name = decodeURIComponent(served);
  } catch {
    return;
  }
  if (name !== req.project) {
    console.error(
      `Warning: the server at ${baseUrl(req.host, req.port)} serves the project "${name}", not "${req.project}" (-f): the reply comes from that index. Start a server for this project on another port (noderag search -f … --port N) and ask it with --port N.`,
    );
  }
}

export function routeFor(
  retrieval: boolean,
  answer: boolean,
): '/answer' | '/retrieval' | '/answer_retrieval' {
  if (retrieval && answer) return '/answer_retrieval';
  if (retrieval) return '/retrieval';
  return '/answer';
}

export function baseUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Posts the question and returns what the CLI prints on stdout. */
export async function askServer(req: ClientRequest): Promise<string> {
  const route = routeFor(req.retrieval, req.answer);
  const { res, url } = await post(req, route, { question: req.question });
  checkProject(req, res);
  let body: unknown;
  try {
    body = await res.json();
  } catch (e) {
    if (isTimeout(e)) throw noReply(req);
    throw notJson(url, res.status);
  }
  const obj = (body ?? {}) as Record<string, unknown>;
  if (!res.ok) throw replyError(res.status, obj.error);
  const fields = route === '/answer_retrieval' ? ['answer', 'retrieval'] : [route.slice(1)];
  const missing = fields.filter((f) => typeof obj[f] !== 'string');
  if (missing.length > 0) {
    throw new CliExit(
      EXIT.FAILURE,
      `The server at ${url} answered without ${missing.map((f) => `"${f}"`).join(' and ')}: it is not a noderag search server (or not one of this version).`,
    );
  }
  if (route === '/answer_retrieval') {
    return JSON.stringify({ answer: obj.answer, retrieval: obj.retrieval }, null, 2);
  }
  return obj[fields[0]!] as string;
}

function notJson(url: string, status: number): CliExit {
  return new CliExit(EXIT.FAILURE, `The server at ${url} did not answer with JSON (status ${status}).`);
}

/**
 * Asks `/answer` with `"stream": true` and passes each piece of the answer to `write` as the
 * server sends it (docs/method.md §7.3). Returns what is printed after the answer: its
 * numbered sources (`[n] file`), or '' when there are none.
 */
export async function streamAnswer(req: ClientRequest, write: (text: string) => void): Promise<string> {
  const { res, url } = await post(req, '/answer', { question: req.question, stream: true });
  checkProject(req, res);
  if (!res.ok || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    let obj: Record<string, unknown>;
    try {
      obj = ((await res.json()) ?? {}) as Record<string, unknown>;
    } catch (e) {
      if (isTimeout(e)) throw noReply(req);
      throw notJson(url, res.status);
    }
    if (!res.ok) throw replyError(res.status, obj.error);
    throw new CliExit(EXIT.FAILURE, `The server at ${url} did not stream the answer (status ${res.status}).`);
  }
  try {
    for await (const event of sseData(res)) {
      const e = event as { type?: string; text?: string; error?: unknown } & Partial<DoneEvent>;
      if (e.type === 'delta' && typeof e.text === 'string') write(e.text);
      else if (e.type === 'error') throw replyError(500, e.error);
      else if (e.type === 'done') return sourceList(e.sources ?? [], e.citations ?? []);
    }
  } catch (e) {
    if (e instanceof CliExit) throw e;
    if (isTimeout(e)) throw noReply(req);
    throw new CliExit(EXIT.FAILURE, `The stream from ${url} broke off: ${(e as Error).message}`);
  }
  throw new CliExit(EXIT.FAILURE, `The server at ${url} ended the stream before the answer was complete.`);
}

interface DoneEvent {
  sources: Source[];
  citations: Citation[];
}

async function post(
  req: ClientRequest,
  route: string,
  body: Record<string, unknown>,
): Promise<{ res: Response; url: string }> {
  const url = `${baseUrl(req.host, req.port)}${route}`;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(req.apiKey ? { authorization: `Bearer ${req.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(req.timeoutMs),
      // noderag's server never redirects: a redirect is another server, said as such below
      // (followed, its target's answer or failure would be reported as this one's).
      redirect: 'manual',
    });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const to = res.headers.get('location');
      throw new CliExit(
        EXIT.FAILURE,
        `${url} answered HTTP ${res.status}${to ? `, a redirect to ${to}` : ''}: not a noderag search server (it never redirects); check --url, --port or config.url / config.port.`,
      );
    }
    return { res, url };
  } catch (e) {
    if (e instanceof CliExit) throw e;
    if (isTimeout(e)) throw noReply(req);
    throw connectionFailure(req, e);
  }
}

/**
 * Why no reply came. Only a refused connection means that nothing listens there: a name that
 * does not resolve, or a connection reset by whatever does listen, is said as what it is.
 */
function connectionFailure(req: ClientRequest, e: unknown): CliExit {
  const base = baseUrl(req.host, req.port);
  const cause = (e as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  if (code === 'ECONNREFUSED' || code === undefined) {
    return new CliExit(
      EXIT.FAILURE,
      `No search server is running at ${base}. Start it with: ${req.startHint}`,
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new CliExit(
      EXIT.FAILURE,
      `cannot find the host ${req.host} (${code}): check --url or --host, or config.url in Node_config.yaml.`,
    );
  }
  const why = typeof cause?.message === 'string' && cause.message !== '' ? `${code}: ${cause.message}` : code;
  return new CliExit(
    EXIT.FAILURE,
    `the connection to ${base} failed (${why}) before a reply: is a noderag search server listening there?`,
  );
}

function noReply(req: ClientRequest): CliExit {
  return new CliExit(
    EXIT.FAILURE,
    `No reply from ${baseUrl(req.host, req.port)} within ${req.timeoutMs / 1000} s.`,
  );
}

/** An error reply's `{code, message}` as the one line the CLI prints. */
function replyError(status: number, error: unknown): CliExit {
  const err = (error ?? {}) as { code?: string; message?: string };
  const hint = status === 401 ? " (set NODERAG_API_KEY to the server's key)" : '';
  return new CliExit(EXIT.FAILURE, `${err.code ?? `http_${status}`}: ${err.message ?? 'no message'}${hint}`);
}

function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
}
