/**
 * Keeping API keys out of logs, error messages and index files. Two layers: the exact keys
 * we know (from the config or the environment) are replaced wherever they appear, and
 * anything shaped like an OpenAI (`sk-…`) or Google (`AIza…`) key is masked as well, in case
 * a provider echoes a key we were never told about.
 */

export const REDACTED = '[redacted]';

const KEY_PATTERNS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{12,}/g, // OpenAI and most OpenAI-compatible servers
  /\bAIza[0-9A-Za-z_-]{20,}/g, // Google API keys
  /(\b[Bb]earer\s+)[A-Za-z0-9._~+/=-]{12,}/g, // Authorization headers copied into messages
];

/** Replaces every known secret and every key-shaped token in `text`. */
export function redactSecrets(text: string, secrets: Iterable<string | null | undefined> = []): string {
  let out = text;
  const known = [...secrets].filter((s): s is string => typeof s === 'string' && s.length >= 4);
  // Longest first, so a key that contains another is replaced whole.
  known.sort((a, b) => b.length - a.length);
  for (const s of known) out = out.split(s).join(REDACTED);
  for (const re of KEY_PATTERNS) {
    out = out.replace(re, (match: string, bearer?: string) =>
      typeof bearer === 'string' && match.startsWith(bearer) ? `${bearer}${REDACTED}` : REDACTED,
    );
  }
  return out;
}

/** A short, safe description of whether a key is set, for status displays. */
export function describeSecret(value: string | null | undefined): string {
  return value ? REDACTED : 'not set';
}
