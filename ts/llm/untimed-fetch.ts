/**
 * A `fetch` without Node's own 300 s limits. Node's fetch (undici) drops a request whose
 * response headers have not arrived within 300 s, and a body that stays silent for 300 s. A
 * non-streaming chat completion from a local server on CPU (Ollama, llama.cpp) sends its
 * headers only once the whole reply is generated, so through the plain fetch no attempt could
 * last longer than 5 minutes, whatever `request_timeout` says: it would fail as a bare
 * "fetch failed" at 300 s. Here both limits are off and each attempt's own timeout
 * (CachedProvider, `request_timeout`) is the only clock.
 *
 * Node bundles undici but does not export it. Its Agent class is reached through the global
 * dispatcher Node's fetch installs under the symbol shared with the `undici` package. When
 * that dispatcher is not a plain Agent (an application installed a proxy agent, or a future
 * Node changed the symbol), the plain fetch is used: the 300 s limits come back, nothing else
 * changes.
 */

/** Where undici (bundled or the package) keeps its global dispatcher. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

type AgentClass = new (options: { headersTimeout: number; bodyTimeout: number }) => object;

/** Node's bundled undici Agent class, or undefined. */
async function agentClass(): Promise<AgentClass | undefined> {
  const g = globalThis as unknown as Record<symbol, unknown>;
  // Node installs its dispatcher on the first fetch; a data: URL makes no connection.
  if (!g[GLOBAL_DISPATCHER]) await fetch('data:,').catch(() => undefined);
  const current = g[GLOBAL_DISPATCHER] as { constructor?: unknown } | undefined;
  const ctor = current?.constructor;
  return typeof ctor === 'function' && ctor.name === 'Agent' ? (ctor as AgentClass) : undefined;
}

/**
 * A fetch whose requests go through an undici Agent built with `options` (default: no headers
 * or body timeout). Falls back to the plain fetch when no Agent class is found.
 */
export function fetchWithAgent(
  options: { headersTimeout: number; bodyTimeout: number } = { headersTimeout: 0, bodyTimeout: 0 },
): typeof fetch {
  let dispatcher: Promise<object | undefined> | undefined;
  return async (input, init) => {
    dispatcher ??= agentClass().then(
      (Agent) => (Agent ? new Agent(options) : undefined),
      () => undefined,
    );
    const d = await dispatcher;
    // `dispatcher` is Node's (undici's) extension of RequestInit.
    return fetch(input, d ? ({ ...init, dispatcher: d } as RequestInit) : init);
  };
}

/** The fetch of the remote adapters: one shared Agent, without Node's 300 s limits. */
export const untimedFetch: typeof fetch = fetchWithAgent();
