/**
 * The root command: `noderag -f DIR -q "question" [-r] [-a] [--stream] [--timeout S] [--url U]
 * [--port P]` posts the question to the running search server (docs/method.md §7.3). On a
 * terminal (or with --stream) the answer is printed as the server streams it, then its
 * sources; piped, the plain answer once it is whole (--stream to stream anyway). The server is at
 * config.url:config.port unless `--url` (a host, or `http://host:port`) or `--port` say
 * otherwise, e.g. for a server started with `noderag search --port 5001`. With `--url` or
 * `--port`, `-f` may be left out (the defaults are then 127.0.0.1 and 5000). A server started
 * with an API key is asked with NODERAG_API_KEY as the bearer key.
 */
import { isIP } from 'node:net';
import { basename, resolve } from 'node:path';
import { shellArg } from '../shell-arg.js';
import { folderValue, missingQuestion, parsePort, projectConfig } from './args.js';
import { askServer, streamAnswer } from './client.js';
import { CliExit, EXIT } from './exit.js';

/** The longest delay a Node timer can hold, in milliseconds. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface QueryArgs {
  folder?: string;
  question?: string;
  retrieval?: boolean;
  answer?: boolean;
  timeout?: string;
  url?: string;
  port?: string;
  /** Print the answer as it is written, then its sources (default: when stdout is a terminal). */
  stream?: boolean;
}

/** Where the server listens when no config says otherwise (the schema's defaults). */
const DEFAULT_SERVER = { host: '127.0.0.1', port: 5000 } as const;

const HOST = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/**
 * The server to ask: `--url` (host, or http://host[:port]) and `--port` over the config's
 * `url` and `port`. A port in the URL and a different `--port` contradict each other.
 */
export function resolveServer(
  args: Pick<QueryArgs, 'url' | 'port'>,
  defaults: { host: string; port: number },
): { host: string; port: number } {
  let host = defaults.host;
  let urlPort: number | undefined;
  if (args.url !== undefined) {
    const raw = args.url.trim();
    if (raw.includes('://')) {
      let u: URL;
      try {
        u = new URL(raw);
      } catch {
        throw new CliExit(EXIT.USAGE, `--url: expected http://host:port or a host name, got "${args.url}"`);
      }
      if (u.protocol !== 'http:' || u.hostname === '' || (u.pathname !== '/' && u.pathname !== '')) {
        throw new CliExit(
          EXIT.USAGE,
          `--url: expected http://host:port (the search server speaks plain HTTP, no path), got "${args.url}"`,
        );
      }
      host = u.hostname.replace(/^\[(.*)\]$/, '$1');
      if (u.port !== '') urlPort = Number(u.port);
    } else if (isIP(raw) !== 0 || HOST.test(raw)) {
      host = raw;
    } else {
      throw new CliExit(EXIT.USAGE, `--url: expected http://host:port or a host name, got "${args.url}"`);
    }
  }
  const flagPort = args.port === undefined ? undefined : parsePort(args.port, defaults.port);
  if (urlPort !== undefined && flagPort !== undefined && urlPort !== flagPort) {
    throw new CliExit(EXIT.USAGE, `--url says port ${urlPort} but --port says ${flagPort}: give one`);
  }
  return { host, port: flagPort ?? urlPort ?? defaults.port };
}

export async function runQuery(args: QueryArgs): Promise<void> {
  const explicitServer = args.url !== undefined || args.port !== undefined;
  if (args.folder === undefined && !explicitServer) {
    throw new CliExit(EXIT.USAGE, 'missing -f <folder>. Run `noderag --help` for usage.');
  }
  const folderText = args.folder === undefined ? undefined : folderValue(args.folder);
  if (args.question === undefined || args.question.trim() === '') missingQuestion();
  const timeoutS = args.timeout === undefined ? 300 : Number(args.timeout);
  // Node's timers hold at most 2^31 − 1 ms (about 24.8 days); a longer one fires at once.
  if (!Number.isFinite(timeoutS) || timeoutS <= 0 || timeoutS * 1000 > MAX_TIMER_MS) {
    throw new CliExit(
      EXIT.USAGE,
      `--timeout: expected a positive number of seconds up to ${Math.floor(MAX_TIMER_MS / 1000)}, got "${args.timeout}"`,
    );
  }
  let defaults: { host: string; port: number } = DEFAULT_SERVER;
  if (folderText !== undefined) {
    const config = projectConfig(resolve(folderText), { requireApiKeys: false, warn: true });
    defaults = { host: config.config.url, port: config.config.port };
  }
  const server = resolveServer(args, defaults);
  const portHint = server.port === defaults.port ? '' : ` --port ${server.port}`;
  const request = {
    host: server.host,
    port: server.port,
    question: args.question,
    retrieval: Boolean(args.retrieval),
    answer: Boolean(args.answer),
    timeoutMs: timeoutS * 1000,
    startHint: `noderag search -f ${folderText === undefined ? '<folder>' : shellArg(folderText)}${portHint}`,
    ...(process.env.NODERAG_API_KEY ? { apiKey: process.env.NODERAG_API_KEY } : {}),
    ...(folderText !== undefined ? { project: basename(resolve(folderText)) } : {}),
  };
  if (args.stream && args.retrieval) {
    throw new CliExit(EXIT.USAGE, '--stream prints an answer as it is written; leave out -r');
  }
  // On a terminal the answer is shown as it is written; piped output stays the plain answer.
  if (!args.retrieval && (args.stream ?? process.stdout.isTTY === true)) {
    const sources = await streamAnswer(request, (text) => process.stdout.write(text));
    process.stdout.write(sources === '' ? '\n' : `\n\nSources:\n${sources}\n`);
    return;
  }
  console.log(await askServer(request));
}
