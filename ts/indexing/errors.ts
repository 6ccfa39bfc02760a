/**
 * Errors of the build machinery. Each carries a stable code (see ts/errors.ts); the CLI
 * maps them to exit codes (docs/method.md §4.6).
 */
import { NodeRagError } from '../errors.js';

/** Another build holds `info/build.lock` (exit 2). */
export class BuildLockedError extends NodeRagError {
  readonly pid: number;
  constructor(pid: number, lockPath: string) {
    super('build_locked', `another build (pid ${pid}) is running (lock file ${lockPath})`);
    this.pid = pid;
  }
}

/** INIT found nothing to index on a first build. */
export class NoDocumentsError extends NodeRagError {
  constructor(message: string) {
    super('no_documents', message);
  }
}

/** One input document could not be read or parsed; the build skips it and goes on. */
export class DocumentError extends NodeRagError {
  /** Path relative to input/, `/` separated. */
  readonly path: string;
  /** Short reason shown in the state tree and log, e.g. `not valid UTF-8`. */
  readonly reason: string;
  constructor(path: string, reason: string, options?: { cause?: unknown }) {
    super('document_unreadable', `${path}: ${reason}`, options);
    this.path = path;
    this.reason = reason;
  }
}
