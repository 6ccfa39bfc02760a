/**
 * The terminal client's HTTP side (docs/method.md §7.3): picks the route from -r/-a, posts the
 * question, and turns the reply into the text to print. Failures become CliExit with one
 * clear line; the caller prints and exits.
 */
import { CliExit, EXIT } from './exit.js';

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
  const url = `${baseUrl(req.host, req.port)}${route}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(req.apiKey ? { authorization: `Bearer ${req.apiKey}` } : {}),
      },
      body: JSON.stringify({ question: req.question }),
      signal: AbortSignal.timeout(req.timeoutMs),
    });
  } catch (e) {
    if (isTimeout(e)) {
      throw new CliExit(
        EXIT.FAILURE,
        `No reply from ${baseUrl(req.host, req.port)} within ${req.timeoutMs / 1000} s.`,
      );
    }
    throw new CliExit(
      EXIT.FAILURE,
      `No search server is running at ${baseUrl(req.host, req.port)}. Start it with: ${req.startHint}`,
    );
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new CliExit(EXIT.FAILURE, `The server at ${url} did not answer with JSON (status ${res.status}).`);
  }
  const obj = (body ?? {}) as Record<string, unknown>;
  if (!res.ok) {
    const err = (obj.error ?? {}) as { code?: string; message?: string };
    const hint = res.status === 401 ? " (set NODERAG_API_KEY to the server's key)" : '';
    throw new CliExit(
      EXIT.FAILURE,
      `${err.code ?? `http_${res.status}`}: ${err.message ?? 'no message'}${hint}`,
    );
  }
  if (route === '/answer_retrieval') {
    return JSON.stringify({ answer: obj.answer, retrieval: obj.retrieval }, null, 2);
  }
  return String(route === '/answer' ? obj.answer : obj.retrieval);
}

function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
}
