/**
 * Error classes with stable codes. Every user-facing failure is one of these; the CLI
 * prints `message` and exits non-zero, the server maps `code` to an HTTP status in one
 * place. Codes are part of the public API: never rename one.
 */

export class NodeRagError extends Error {
  /** Stable, machine-readable code, e.g. `index_not_built`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Invalid or missing configuration (Node_config.yaml). */
export class ConfigError extends NodeRagError {
  /** Every problem found, each naming its dotted key path. */
  readonly problems: string[];
  constructor(message: string, problems: string[] = [], options?: { cause?: unknown }) {
    super('invalid_config', message, options);
    this.problems = problems;
  }
}

/** A native-core failure on an index file: missing, truncated, corrupted, wrong dimension. */
export class IndexFileError extends NodeRagError {}

/** The index has not been built (or is damaged) so searching is impossible. */
export class IndexNotBuiltError extends NodeRagError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('index_not_built', message, options);
  }
}

/**
 * The index cannot be used with the config as it is now (config.dim differs from the one it
 * was built with): a config problem for the CLI (exit 2, as `build` says it), not being built
 * for everything that waits for a usable index.
 */
export class IndexConfigMismatchError extends IndexNotBuiltError {}

/** A question that fails validation (empty, not a string, too long). */
export class InvalidQuestionError extends NodeRagError {}

/** A model provider failed after retries (or failed with a non-retryable status). */
export class ProviderError extends NodeRagError {
  readonly provider: string;
  readonly status: number | undefined;
  /** True for 408/409/429/5xx, timeouts and connection resets. Retry logic reads only this. */
  readonly retryable: boolean;
  /** Delay the provider asked for (Retry-After), in milliseconds; it wins over backoff. */
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    details: { provider: string; status?: number; retryable: boolean; code?: string; retryAfterMs?: number },
    options?: { cause?: unknown },
  ) {
    super(details.code ?? 'upstream_error', message, options);
    this.provider = details.provider;
    this.status = details.status;
    this.retryable = details.retryable;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** An argument that the native core rejected (wrong length, out of range, …). */
export class InvalidArgumentError extends NodeRagError {}

/** A native handle was used after `close()`. */
export class ClosedError extends NodeRagError {}

/** A bug in the native core (a caught Rust panic) or another unexpected failure. */
export class InternalError extends NodeRagError {}
