/**
 * Field builders for the config schema. Each field carries its default, its one-line
 * comment (the template's comment, via `.describe()`) and one "expected …" message used
 * for every way the value can be wrong, so a problem always reads
 * `config.chunk_size: expected an integer from 64 to 16384, got "big"`.
 */
import { isIP } from 'node:net';
import { z } from 'zod';

/** Messages that start with this prefix get `, got <value>` appended by the loader. */
export const EXPECTED_PREFIX = 'expected ';

function rangeText(
  kind: 'an integer' | 'a number',
  min?: number,
  max?: number,
  exclusiveMin = false,
): string {
  if (min !== undefined && max !== undefined)
    return exclusiveMin ? `${kind} > ${min} and ≤ ${max}` : `${kind} from ${min} to ${max}`;
  if (min !== undefined) return `${kind} ${exclusiveMin ? '>' : '≥'} ${min}`;
  return kind;
}

/**
 * An integer in [min, max]. Without max the bound is the largest exact integer (zod's int()
 * refuses beyond it), named in the message: "≥ 1" alone would refuse 1e20 while saying it fits.
 */
export function intField(def: number, comment: string, min: number, max?: number) {
  const msg = `${EXPECTED_PREFIX}${rangeText('an integer', min, max ?? Number.MAX_SAFE_INTEGER)}`;
  let s = z.number({ error: msg }).int({ error: msg }).min(min, { error: msg });
  if (max !== undefined) s = s.max(max, { error: msg });
  return s.default(def).describe(comment);
}

/** A finite number; `exclusiveMin` makes the lower bound strict (`> 0`). */
export function numberField(
  def: number,
  comment: string,
  bounds: { min?: number; max?: number; exclusiveMin?: boolean },
) {
  const msg = `${EXPECTED_PREFIX}${rangeText('a number', bounds.min, bounds.max, bounds.exclusiveMin)}`;
  let s = z.number({ error: msg });
  if (bounds.min !== undefined) {
    s = bounds.exclusiveMin ? s.gt(bounds.min, { error: msg }) : s.min(bounds.min, { error: msg });
  }
  if (bounds.max !== undefined) s = s.max(bounds.max, { error: msg });
  return s.default(def).describe(comment);
}

export function boolField(def: boolean, comment: string) {
  return z
    .boolean({ error: `${EXPECTED_PREFIX}true or false` })
    .default(def)
    .describe(comment);
}

export function enumText(values: readonly string[]): string {
  return `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
}

export function enumField<const T extends readonly [string, ...string[]]>(
  values: T,
  def: T[number],
  comment: string,
) {
  return z
    .enum(values, { error: `${EXPECTED_PREFIX}${enumText(values)}` })
    .default(def as never)
    .describe(comment);
}

export function nonEmptyStringField(def: string, comment: string) {
  const msg = `${EXPECTED_PREFIX}a non-empty string`;
  // Spaces around a name are a typo no provider means ("gpt-4o-mini "): dropped.
  return z
    .string({ error: msg })
    .trim()
    .refine((s) => s.length > 0, { error: msg })
    .default(def)
    .describe(comment);
}

/**
 * An API key: null, empty or the placeholder `<API_KEY>` all mean "unset" (the environment
 * variable is used instead). The value is a secret: problems never echo it.
 */
export const API_KEY_PLACEHOLDER = '<API_KEY>';
export function apiKeyField(comment: string) {
  return z
    .string({ error: `${EXPECTED_PREFIX}a string or null` })
    .nullable()
    .default(null)
    .describe(comment);
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

export function baseUrlField(comment: string) {
  const msg = `${EXPECTED_PREFIX}an http(s) URL or null`;
  // new URL() ignores spaces around a URL, the SDKs do not ("…/v1 " went to "/v1%20/…").
  return z
    .string({ error: msg })
    .trim()
    .refine(isHttpUrl, { error: msg })
    .nullable()
    .default(null)
    .describe(comment);
}

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** True for a host name (RFC 1123 labels) or an IPv4/IPv6 address. */
export function isHost(s: string): boolean {
  return isIP(s) !== 0 || HOSTNAME.test(s);
}

/** A host name (RFC 1123 labels) or an IPv4/IPv6 address. */
export function hostField(def: string, comment: string) {
  const msg = `${EXPECTED_PREFIX}a host name or IP address`;
  return z.string({ error: msg }).refine(isHost, { error: msg }).default(def).describe(comment);
}

/** A free-form string or null (used for `main_folder`). */
export function optionalStringField(comment: string) {
  return z
    .string({ error: `${EXPECTED_PREFIX}a string or null` })
    .nullable()
    .default(null)
    .describe(comment);
}

/**
 * An instruction prefix for an embedding model: any string, default empty. Null reads as
 * empty so `query_prefix:` with no value means "none".
 */
export function prefixField(comment: string) {
  return z
    .string({ error: `${EXPECTED_PREFIX}a string (may be empty)` })
    .nullable()
    .default('')
    .transform((s) => s ?? '')
    .describe(comment);
}

/** An integer (at least `min` when given) or null, default null; extra rules (m0 = 2·m) are cross-field checks. */
export function nullableIntField(comment: string, min?: number, expected?: string) {
  // Without `expected` the message names the bounds, the upper one the largest exact integer
  // as in intField.
  const msg = `${EXPECTED_PREFIX}${expected ?? `null or ${rangeText('an integer', min ?? -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)}`}`;
  let s = z.number({ error: msg }).int({ error: msg });
  if (min !== undefined) s = s.min(min, { error: msg });
  return s.nullable().default(null).describe(comment);
}
