/**
 * The root command: `noderag -f DIR -q "question" [-r] [-a] [--timeout S]` posts the
 * question to the running search server (docs/method.md §7.3).
 */
import { resolve } from 'node:path';
import { NodeConfig } from '../config/index.js';
import { ConfigError } from '../errors.js';
import { askServer } from './client.js';
import { CliExit, EXIT } from './exit.js';

export interface QueryArgs {
  folder?: string;
  question?: string;
  retrieval?: boolean;
  answer?: boolean;
  timeout?: string;
}

export async function runQuery(args: QueryArgs): Promise<void> {
  if (!args.folder) throw new CliExit(EXIT.USAGE, 'missing -f <folder>. Run `noderag --help` for usage.');
  if (args.question === undefined || args.question.trim() === '') {
    throw new CliExit(EXIT.USAGE, 'missing or empty -q "<question>". Run `noderag --help` for usage.');
  }
  const timeoutS = args.timeout === undefined ? 300 : Number(args.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) {
    throw new CliExit(EXIT.USAGE, `--timeout: expected a positive number of seconds, got "${args.timeout}"`);
  }
  const folder = resolve(args.folder);
  let config: NodeConfig;
  try {
    config = NodeConfig.fromMainFolder(folder, { requireApiKeys: false });
  } catch (e) {
    if (e instanceof ConfigError) throw new CliExit(EXIT.USAGE, e.message);
    throw e;
  }
  const out = await askServer({
    host: config.config.url,
    port: config.config.port,
    question: args.question,
    retrieval: Boolean(args.retrieval),
    answer: Boolean(args.answer),
    timeoutMs: timeoutS * 1000,
    startHint: `noderag search -f ${args.folder}`,
  });
  console.log(out);
}
