/**
 * Turning provider failures into ProviderError with the one flag retry logic reads:
 * `retryable` is true for 408, 409, 429, 5xx, timeouts, connection failures and invalid
 * structured replies; 400, 401, 403, 404 (and other 4xx) fail at once with a message that
 * says what to fix. Every message passes through secret redaction.
 */
import { apiKeyHint } from '../config/api-keys.js';
import { redactSecrets } from '../config/secrets.js';
import { ProviderError } from '../errors.js';
import type { ProviderName } from './types.js';

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Retry-After as seconds or an HTTP date; `retry-after-ms` (OpenAI) wins when present. */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const v = headers.get('retry-after');
  if (v === null || v.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.round(Number(v) * 1000);
  const date = Date.parse(v);
  if (Number.isFinite(date)) return Math.max(0, date - nowMs);
  return undefined;
}

export interface ErrorContext {
  provider: ProviderName;
  /** Config section, for messages: `model_config` or `embedding_config`. */
  section: string;
  model: string;
  /** The section's base_url, for connection failures (null: the provider's own API). */
  baseUrl?: string | null;
  /** Keys to redact from any text we pass on. */
  secrets: readonly string[];
}

/** One line, keys redacted, at most 300 characters (redacted first: a cut key no longer matches). */
export function clean(ctx: ErrorContext, text: string): string {
  const oneLine = redactSecrets(text.replace(/\s+/g, ' ').trim(), ctx.secrets);
  return oneLine.length > 300 ? `${oneLine.slice(0, 297)}...` : oneLine;
}

/**
 * "openai (embedding_config, model nomic-embed-text)": which of the two configured services
 * failed. A Summary stage uses both, and they may be two servers (Ollama for chat, vLLM for
 * embeddings); the bare provider name does not tell them apart.
 */
export function who(ctx: ErrorContext): string {
  return `${ctx.provider} (${ctx.section}, model ${ctx.model})`;
}

export function httpError(
  ctx: ErrorContext,
  status: number,
  detail: string,
  retryAfterMs?: number,
  cause?: unknown,
): ProviderError {
  const d = detail ? `: ${clean(ctx, detail)}` : '';
  let message: string;
  if (status === 401 || status === 403) {
    message = `authentication failed for provider ${ctx.provider} (HTTP ${status}): check ${ctx.section}.${apiKeyHint(ctx.provider)}`;
  } else if (status === 404) {
    message = `provider ${ctx.provider} returned HTTP 404 for model "${ctx.model}": check ${ctx.section}.${ctx.section === 'embedding_config' ? 'embedding_model_name' : 'model_name'} and base_url${d}`;
  } else if (status === 429) {
    message = `provider ${who(ctx)} is rate limiting (HTTP 429)${d}`;
  } else if (status === 400) {
    message = `provider ${who(ctx)} rejected the request (HTTP 400)${d}`;
  } else {
    message = `provider ${who(ctx)} returned HTTP ${status}${d}`;
  }
  return new ProviderError(
    message,
    { provider: ctx.provider, status, retryable: isRetryableStatus(status), retryAfterMs },
    { cause },
  );
}

export function networkError(ctx: ErrorContext, detail: string, cause?: unknown): ProviderError {
  // Where it tried, and the key that says so: a wrong port or host in base_url is the usual cause.
  const where = ctx.baseUrl
    ? ` at ${clean(ctx, withoutCredentials(ctx.baseUrl))} (${ctx.section}.base_url)`
    : ctx.baseUrl === null
      ? ` at its default address (${ctx.section}.base_url is not set)`
      : '';
  return new ProviderError(
    `cannot reach provider ${who(ctx)}${where}: ${clean(ctx, detail)}`,
    { provider: ctx.provider, retryable: true },
    { cause },
  );
}

/**
 * A URL as it may be shown: without a user name, password, query or fragment (where tokens
 * are put).
 */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.href;
  } catch {
    return url.replace(/[?#].*$/s, '');
  }
}

/**
 * A wait shorter than request_timeout by more than this was cut by the call's deadline; within
 * it, the two were the same (the time spent before the request: cache, limiter).
 */
const SAME_TIMEOUT_MS = 100;

/**
 * `configuredMs` is the section's request_timeout: a shorter wait was what remained of the
 * call's deadline (search: 60 s for all attempts), which the message says instead.
 */
export function timeoutError(ctx: ErrorContext, timeoutMs: number, configuredMs?: number): ProviderError {
  const why =
    configuredMs === undefined
      ? ''
      : timeoutMs > configuredMs - SAME_TIMEOUT_MS
        ? ` (${ctx.section}.request_timeout)`
        : " (what was left of the call's deadline)";
  return new ProviderError(
    `provider ${who(ctx)} did not answer within ${Math.round(timeoutMs / 100) / 10} s${why}`,
    { provider: ctx.provider, retryable: true, code: 'upstream_timeout' },
  );
}

export function invalidReplyError(ctx: ErrorContext, what: string, detail: string): ProviderError {
  return new ProviderError(
    `provider ${ctx.provider} (model ${ctx.model}) returned an invalid ${what}: ${clean(ctx, detail)}`,
    { provider: ctx.provider, retryable: true },
  );
}

/**
 * A reply the provider says is not whole: cut at the token limit, or stopped by its content
 * filter. The text it has is not the answer, so it is not cached; asking again at
 * temperature 0 gets the same cut, so it is not retried either (the message says what to change).
 * `reason` is the provider's own word for it (finish_reason / finishReason).
 */
export function incompleteReplyError(ctx: ErrorContext, reason: string): ProviderError {
  const cut = /length|max_tokens/i.test(reason);
  const why = cut
    ? `was cut at the token limit (${reason}); raise ${ctx.section}.max_tokens`
    : `was stopped by the provider (${reason}), e.g. its safety or content filter`;
  return new ProviderError(`the reply of ${who(ctx)} ${why}`, { provider: ctx.provider, retryable: false });
}

/**
 * The model declined to answer (OpenAI's `refusal`): like a content filter's stop, asking
 * again at temperature 0 gets the same, so it fails at once (it was retried six times).
 */
export function refusalError(ctx: ErrorContext, refusal: string): ProviderError {
  return new ProviderError(`the model of ${who(ctx)} refused to answer: ${clean(ctx, refusal)}`, {
    provider: ctx.provider,
    retryable: false,
  });
}

/**
 * A reply the server itself gave up on (vLLM's finish_reason `abort`: the request was
 * preempted or cancelled on the server). Not the model's answer, so never kept; retried,
 * since the next attempt usually runs whole.
 */
export function abortedReplyError(ctx: ErrorContext, reason: string): ProviderError {
  return new ProviderError(
    `the reply of ${who(ctx)} was aborted by the server before it was complete (${reason})`,
    {
      provider: ctx.provider,
      retryable: true,
    },
  );
}

/** A stream that ended without the provider saying the reply was complete (retried before its first delta). */
export function unfinishedStreamError(ctx: ErrorContext): ProviderError {
  return new ProviderError(
    `the reply stream of ${who(ctx)} ended before the reply was complete (no finish reason)`,
    { provider: ctx.provider, retryable: true },
  );
}

/** The error a rejected AbortSignal stands for (its reason, or a standard AbortError). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

/** Common low-level network failure codes (undici and node:net). */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** The network error code somewhere in an error's cause chain, if any. */
export function networkCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
