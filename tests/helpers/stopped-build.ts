/**
 * A build interrupted right after one of its stages committed, as a Ctrl-C between two stages
 * leaves it: `runBuild` with its `signal` aborted from the `afterStage` hook. Resolves to the
 * build's exit code (130).
 */
import { PassThrough } from 'node:stream';
import { type BuildOptions, runBuild } from '../../ts/indexing/pipeline.js';
import type { StageName } from '../../ts/project/state.js';

export function buildStoppedAfter(
  folder: string,
  stage: StageName,
  options: Pick<BuildOptions, 'onReport'> = {},
): Promise<number> {
  const stop = new AbortController();
  return runBuild({
    folder,
    yes: true,
    handleSignals: false,
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    signal: stop.signal,
    hooks: { afterStage: (s) => s === stage && stop.abort() },
    ...options,
  });
}
