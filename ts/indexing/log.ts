/**
 * info/info.log (docs/method.md §4.6): append-only, one line per event,
 * `<ISO-8601 UTC> <LEVEL> <message>`. Every message passes through a redactor first, so
 * API keys never reach the file even when a provider echoes them in an error.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

type LogLevel = 'INFO' | 'WARN' | 'ERROR';
type Redactor = (text: string) => string;

const REDACTED = '[REDACTED]';

/** Shapes of credentials worth hiding even when not configured here (echoed by a proxy, say). */
const SECRET_PATTERNS: readonly [RegExp, string][] = [
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED], // OpenAI-style keys
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED], // Google API keys
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1${REDACTED}`],
  [/([?&](?:key|api_key|apikey|access_token)=)[^&\s]+/gi, `$1${REDACTED}`],
];

/**
 * A redactor that hides the given secret values (API keys from config and environment)
 * and anything shaped like a well-known key. Values shorter than 6 characters are not
 * treated as secrets: replacing them would garble ordinary words.
 */
export function secretRedactor(secrets: readonly (string | null | undefined)[] = []): Redactor {
  const values = [
    ...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.trim().length >= 6)),
  ]
    // Longest first, so a key that contains another is hidden whole.
    .sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const value of values) out = out.split(value).join(REDACTED);
    for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
    return out;
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** One log line (without the newline): control characters and line breaks escaped, so one event stays one line. */
export function formatLogLine(date: Date, level: LogLevel, message: string): string {
  const oneLine = message
    .replace(/\r\n|\r|\n/g, '\\n')
    .replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${date.toISOString()} ${level} ${oneLine}`;
}

/** "12.4 s" (one decimal), as in the stage timing lines. */
export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export interface StageCounts {
  items?: number;
  calls?: number;
  cacheHits?: number;
  retries?: number;
  drops?: number;
}

export class BuildLog {
  private readonly redact: Redactor;
  private readonly now: () => Date;

  constructor(
    readonly path: string,
    options: { redact?: Redactor; now?: () => Date } = {},
  ) {
    this.redact = options.redact ?? secretRedactor();
    this.now = options.now ?? (() => new Date());
    mkdirSync(dirname(path), { recursive: true });
  }

  /** Appends synchronously: a line logged before a crash is on disk, and lines never interleave. */
  write(level: LogLevel, message: string): void {
    appendFileSync(this.path, `${formatLogLine(this.now(), level, this.redact(message))}\n`);
  }

  info(message: string): void {
    this.write('INFO', message);
  }

  warn(message: string): void {
    this.write('WARN', message);
  }

  error(message: string): void {
    this.write('ERROR', message);
  }

  /** Log "<stage> started"; the returned function logs "<stage> finished in N s (counts)". */
  stage(name: string): (counts?: StageCounts) => number {
    const started = performance.now();
    this.info(`${name} started`);
    return (counts = {}) => {
      const ms = performance.now() - started;
      const parts = Object.entries({
        items: counts.items,
        calls: counts.calls,
        'cache hits': counts.cacheHits,
        retries: counts.retries,
        drops: counts.drops,
      })
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${v}`);
      this.info(
        `${name} finished in ${formatSeconds(ms)}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`,
      );
      return ms;
    };
  }
}
