/**
 * `noderag eval -f DIR --questions FILE.jsonl [--json] [--set key=value ...]`: retrieval
 * quality of a built index on the user's own questions (ts/eval). Each line of FILE is
 * `{"question": "...", "answers": ["..."], "supporting": ["file or text", ...]}`; every
 * question is retrieved in-process and the report gives, per config (the file's, then the
 * same with the `--set` search-time overrides), answer recall, support recall, average
 * context tokens and the naive top-k baseline at the same tokens with the same embeddings.
 *
 * Exit codes: 0 done; 1 index not built, or a provider failed; 2 bad flag, malformed
 * questions file (the message names the line), bad `--set`, invalid config.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineCommand } from 'citty';
import { IndexNotBuiltError } from '../errors.js';
import {
  describeOverrides,
  type EvalConfig,
  evalReportJson,
  evaluate,
  formatEvalReport,
  isMatchable,
  parseQuestions,
  parseSettings,
  QuestionsFileError,
  SEARCH_TIME_KEYS,
  type SearchOverrides,
  SettingError,
  withSearchSettings,
} from '../eval/index.js';
import { configuredEmbedding } from '../indexing/stages/embedding.js';
import { embeddingMismatchWarning } from '../project/state.js';
import { parseStateText, readStateText } from '../search/index-files.js';
import { shellArg } from '../shell-arg.js';
import { decodeUtf8Text } from '../utf8-text.js';
import { folderArg, folderValue, projectConfig } from './args.js';
import { CliExit, EXIT, unusableIndexExit } from './exit.js';
import { SUB_COMMAND_METAS } from './metas.js';

/** Every `--set` value (citty keeps only the last of a repeated flag). */
export function setFlags(rawArgs: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === '--set') {
      const v = rawArgs[i + 1];
      if (v === undefined || v.startsWith('--'))
        throw new CliExit(EXIT.USAGE, '--set: expected key=value, e.g. --set HNSW_results=20');
      out.push(v);
      i++;
    } else if (a.startsWith('--set=')) out.push(a.slice('--set='.length));
  }
  return out;
}

function loadQuestions(file: string) {
  if (file.trim() === '') {
    throw new CliExit(EXIT.USAGE, '--questions needs a value: the JSONL file of questions');
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a folder; give the JSONL file of questions'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : (code ?? String(e));
    throw new CliExit(EXIT.USAGE, `--questions: cannot read ${file}: ${why}`);
  }
  const decoded = decodeUtf8Text(bytes, file);
  if (!decoded.ok) throw new CliExit(EXIT.USAGE, `--questions: ${decoded.problem}`);
  try {
    return parseQuestions(decoded.text, file);
  } catch (e) {
    if (e instanceof QuestionsFileError) throw new CliExit(EXIT.USAGE, e.message);
    throw e;
  }
}

/** A progress bar on stderr, drawn only on a terminal. */
function progressBar(): { update(done: number, total: number): void; clear(): void } {
  const out = process.stderr;
  if (!out.isTTY) return { update() {}, clear() {} };
  let drawn = false;
  let last = 0;
  return {
    update(done, total) {
      const now = performance.now();
      if (done < total && now - last < 100) return;
      last = now;
      const width = 30;
      const filled = total ? Math.round((done / total) * width) : width;
      out.write(`\r\x1b[K${'#'.repeat(filled)}${'.'.repeat(width - filled)} ${done}/${total} questions`);
      drawn = true;
    },
    clear() {
      if (drawn) out.write('\r\x1b[K');
    },
  };
}

export default defineCommand({
  meta: SUB_COMMAND_METAS.eval,
  args: {
    ...folderArg,
    questions: {
      type: 'string',
      required: true,
      description:
        'JSON Lines file, one {"question": "...", "answers": ["..."], "supporting": ["input file or text", ...]} per line',
    },
    json: { type: 'boolean', description: 'print one JSON object instead of the table' },
    set: {
      type: 'string',
      description: `try a search-time setting without editing the file (repeatable): ${SEARCH_TIME_KEYS.join(', ')}`,
    },
  },
  async run({ args, rawArgs }) {
    const folderText = folderValue(args.folder);
    const folder = resolve(folderText);
    const config = projectConfig(folder);
    let overrides: SearchOverrides;
    const configs: EvalConfig[] = [{ name: 'Node_config.yaml', config, overrides: {} }];
    try {
      overrides = parseSettings(setFlags(rawArgs));
      if (Object.keys(overrides).length > 0) {
        const name = describeOverrides(overrides);
        configs.push({ name, config: withSearchSettings(config, overrides), overrides });
      }
    } catch (e) {
      if (e instanceof SettingError) throw new CliExit(EXIT.USAGE, `--set ${e.message}`);
      throw e;
    }
    const questions = loadQuestions(args.questions);
    // A gold answer the scorer can never find lowers answer recall silently: say which, now
    // and in the --json report's warnings (as the supporting entries' warnings are).
    const earlyWarnings: string[] = [];
    for (const q of questions) {
      for (const a of q.answers) {
        if (!isMatchable(a)) {
          const w = `line ${q.line}: answer ${JSON.stringify(a)} is only articles and punctuation once normalised (as HotpotQA/SQuAD scoring does), so it is never found; give it in other words`;
          earlyWarnings.push(w);
          console.error(`Warning: ${args.questions}, ${w}`);
        }
      }
    }
    const stateText = await readStateText(folder);
    if (stateText === null) {
      throw new CliExit(
        EXIT.FAILURE,
        `No index in ${folder}: build it first with \`noderag build -f ${shellArg(folderText)}\`.`,
      );
    }
    // The naive baseline compares every chunk's vector: a build that stopped before its
    // Embedding stage left the new chunks without one.
    const state = parseStateText(stateText, folder);
    if (state.current_state !== 'FINISHED') {
      throw new CliExit(
        EXIT.FAILURE,
        `The last build of ${folder} has not finished (it stopped at ${state.current_state}); finish it with \`noderag build -f ${shellArg(folderText)}\` before evaluating.`,
      );
    }
    const mismatch = embeddingMismatchWarning(folder, state, configuredEmbedding(config));
    if (mismatch) {
      console.error(`Warning: ${mismatch}`);
      earlyWarnings.push(mismatch);
    }
    // Each config's own warnings: a --set can make one the file alone does not (a ppr_mode
    // the file's ppr_max_iter cannot converge in), named after the config it belongs to.
    for (const c of configs) {
      const known = c === configs[0] ? [] : configs[0]!.config.warnings;
      for (const w of c.config.warnings) {
        if (!known.includes(w)) console.error(`Warning${c === configs[0] ? '' : ` (${c.name})`}: ${w}`);
      }
    }
    const bar = progressBar();
    let run: Awaited<ReturnType<typeof evaluate>>;
    try {
      run = await evaluate({ questions, configs, onProgress: (d, t) => bar.update(d, t) });
    } catch (e) {
      if (e instanceof IndexNotBuiltError)
        throw new CliExit(unusableIndexExit(e), `Cannot evaluate ${folder}: ${e.message}`);
      throw e;
    } finally {
      bar.clear();
    }
    if (args.json)
      console.log(
        JSON.stringify(evalReportJson({ ...run, warnings: [...earlyWarnings, ...run.warnings] }), null, 2),
      );
    else console.log(formatEvalReport(run, folderText));
  },
});
