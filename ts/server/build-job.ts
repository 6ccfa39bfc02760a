/**
 * One in-process build at a time, with its output kept as lines and pushed to listeners
 * (the server-sent event streams of GET /build/events and the web UI's open pages). A second
 * start while one runs is refused by `start` returning false.
 */
import { Writable } from 'node:stream';
import type { BuildEvent } from './build-event.js';

export type { BuildEvent };

export interface BuildSinks {
  stdout: Writable;
  stderr: Writable;
}

export type BuildRunner = (sinks: BuildSinks) => Promise<number>;

/** Plain-words summaries of runBuild's exit codes (ts/indexing/tree.ts BUILD_EXIT). */
export function describeExit(code: number): string {
  switch (code) {
    case 0:
      return 'Build finished.';
    case 1:
      return 'The build failed; see the log lines above. Its state is saved: start the build again to resume.';
    case 2:
      return 'The build could not start: the configuration is invalid or another build is running.';
    case 3:
      return 'The configuration file was just created; review it and start the build again.';
    case 130:
      return 'The build was interrupted.';
    default:
      return `The build ended with code ${code}.`;
  }
}

function lineWriter(onLine: (line: string) => void): Writable {
  let pending = '';
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, done) {
      pending += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const p of parts) onLine(p);
      done();
    },
    final(done) {
      if (pending) onLine(pending);
      pending = '';
      done();
    },
  });
}

/** What is relayed between the processes of one server: a build's start, then its events. */
export type RelayedBuildEvent = BuildEvent | { kind: 'start' };

export class BuildJob {
  readonly #run: BuildRunner | undefined;
  readonly #publish: ((e: RelayedBuildEvent) => void) | undefined;
  readonly #listeners = new Set<(e: BuildEvent) => void>();
  #events: BuildEvent[] = [];
  #running = false;

  /**
   * `run` is the build `start` runs unless it is given another. `publish` receives the start
   * and events of the builds this job runs, for the other processes of a server (`mirror`).
   */
  constructor(run?: BuildRunner, options: { publish?: (e: RelayedBuildEvent) => void } = {}) {
    this.#run = run;
    this.#publish = options.publish;
  }

  /**
   * Shows a build another process of the server runs (relayed by `publish` there): its events
   * go to this job's listeners and history, and `running` holds until its end.
   */
  mirror(e: RelayedBuildEvent): void {
    if (e.kind === 'start') {
      this.#events = [];
      this.#running = true;
      return;
    }
    if (e.kind === 'done') this.#running = false;
    this.#emit(e, false);
  }

  get running(): boolean {
    return this.#running;
  }

  /** Events of the current (or last) build, for a page that connects late. */
  get history(): readonly BuildEvent[] {
    return this.#events;
  }

  subscribe(listener: (e: BuildEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Starts a build (`run`, else the constructor's); false when one is already running.
   * `onEnd` runs before `done` is sent.
   */
  start(onEnd?: (exitCode: number) => Promise<void> | void, run = this.#run): boolean {
    if (!run) throw new TypeError('BuildJob.start: no build to run');
    if (this.#running) return false;
    this.#running = true;
    this.#events = [];
    this.#publish?.({ kind: 'start' });
    const stdout = lineWriter((text) => this.#emit({ kind: 'line', stream: 'out', text }));
    const stderr = lineWriter((text) => this.#emit({ kind: 'line', stream: 'err', text }));
    void (async () => {
      let exitCode: number;
      let message: string;
      try {
        exitCode = await run({ stdout, stderr });
        message = describeExit(exitCode);
      } catch (e) {
        exitCode = 1;
        message = `The build stopped on an unexpected error: ${e instanceof Error ? e.message : String(e)}`;
      }
      // Flush a last unterminated line before `done` goes out.
      await Promise.all([stdout, stderr].map((w) => new Promise<void>((r) => w.end(r))));
      try {
        await onEnd?.(exitCode);
      } finally {
        this.#running = false;
        this.#emit({ kind: 'done', exitCode, message });
      }
    })();
    return true;
  }

  #emit(e: BuildEvent, local = true): void {
    this.#events.push(e);
    for (const l of this.#listeners) l(e);
    if (local) this.#publish?.(e);
  }
}
