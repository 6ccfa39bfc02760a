/**
 * Test-only entry point: `noderag build -f <folder> --yes` with test hooks, for the
 * end-to-end tests that need a real process to kill or a fast retry policy. The CLI reads
 * no test settings; this script passes them to `runBuild` as `hooks`.
 *
 *   node --import tsx tests/helpers/build-entry.ts <folder> [--crash-at <stage>[:<step>]]
 *        [--fast-retry] [--allow-failures]
 *
 * `--crash-at <stage>` kills the process with SIGKILL right after that stage's commit;
 * `--crash-at <stage>:<step>` at that step of its commit (files-synced, manifest-written,
 * renamed): kill -9 at exact points, without racing the process.
 * `--fast-retry`: the build retry policy with millisecond delays, so six attempts against a
 * failing fake server take no time. Exits with the build's exit code.
 */
import { parseArgs } from 'node:util';
import { type BuildHooks, runBuild } from '../../ts/indexing/pipeline.js';
import { BUILD_RETRY_POLICY } from '../../ts/llm/retry.js';
import { STAGES } from '../../ts/project/state.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'crash-at': { type: 'string' },
    'fast-retry': { type: 'boolean' },
    'allow-failures': { type: 'boolean' },
  },
});
const folder = positionals[0];
if (folder === undefined || positionals.length > 1) {
  console.error(
    'usage: build-entry.ts <folder> [--crash-at <stage>[:<step>]] [--fast-retry] [--allow-failures]',
  );
  process.exit(2);
}

function die(): void {
  process.kill(process.pid, 'SIGKILL');
}

const hooks: BuildHooks = {};
const crashAt = values['crash-at'];
if (crashAt !== undefined) {
  const i = crashAt.lastIndexOf(':');
  const stage = i < 0 ? crashAt : crashAt.slice(0, i);
  const step = i < 0 ? null : crashAt.slice(i + 1);
  if (!(STAGES as readonly string[]).includes(stage)) {
    console.error(`--crash-at: unknown stage ${JSON.stringify(stage)} (stages: ${STAGES.join(', ')})`);
    process.exit(2);
  }
  if (step === null) {
    hooks.afterStage = (s) => {
      if (s === stage) die();
    };
  } else {
    hooks.afterCommitStep = (s, st) => {
      if (s === stage && st === step) die();
    };
  }
}
if (values['fast-retry']) hooks.retry = { ...BUILD_RETRY_POLICY, baseDelayMs: 5, maxDelayMs: 20 };

process.exitCode = await runBuild({
  folder,
  yes: true,
  allowFailures: values['allow-failures'] === true,
  hooks,
});
