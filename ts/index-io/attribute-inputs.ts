/**
 * cache/attribute_inputs.json: what each attribute was written from, so that a sync asks the
 * model again only for attributes whose prompt input changed (docs/method.md §4.5).
 *
 *   { "version": 1,
 *     "inputs":  { "<attribute id>": "<SHA-256 of its prompt input>" },
 *     "retired": { "<attribute id>": { "input": "<SHA-256>", "human_readable_id": n,
 *                  "context": "…", "embedding": "<base64 f32 LE>" | null,
 *                  "generation": g, "updated_generation": g } },
 *     "unimportant": { "<entity id>": "<SHA-256 of its prompt input when judged>" },
 *     "model": "<SHA-256 of the chat model the inputs were hashed with>" }
 *
 * `inputs` covers the attributes in attributes.parquet. `retired` holds the attributes a sync
 * removed in its Document commit (their entity went, or its support changed): the Attribute
 * stage of the same cycle puts one back, text and vector unchanged and without a model call,
 * when the entity is important again and its new prompt input hashes the same; it then
 * empties `retired`. Written in the same commits as attributes.parquet, so the two always
 * agree. Indexes built before this file existed have none: their attributes are judged as
 * before (regenerated when their entity changed). `unimportant` holds the input of each
 * entity (weight > 1) last judged not important and without an attribute: in a later cycle
 * such an entity is judged again only when its input differs (an edited file's entities leave
 * with its old chunk and come back with the new one, their support changed but mostly not
 * their material, docs/method.md §3.5). It was added later; a file without it reads as empty.
 * `model` (added later too) names the chat model of the last Attribute stage: only under the
 * same model may a sync keep an attribute without hashing its input again when nothing around
 * its entity changed (every input hashes the model too).
 */
import { IndexFileError } from '../errors.js';
import { readTextIfExists } from '../project/read-optional.js';
import { decodeVector, encodeVector } from './retired-vectors.js';

export const ATTRIBUTE_INPUTS_FILE = 'cache/attribute_inputs.json';
const VERSION = 1;

export interface RetiredAttribute {
  input: string;
  humanReadableId: number;
  context: string;
  embedding: Float32Array | null;
  generation: number;
  updatedGeneration: number;
}

export interface AttributeInputs {
  /** attribute id → SHA-256 of the prompt input it was written from. */
  inputs: Map<string, string>;
  /** attribute id → the attribute a sync removed in this cycle, until the Attribute stage. */
  retired: Map<string, RetiredAttribute>;
  /** entity id → SHA-256 of its prompt input when it was last judged not important. */
  unimportant: Map<string, string>;
  /** SHA-256 of the chat model (provider, model, params) of the last Attribute stage. */
  model?: string;
}

export function emptyAttributeInputs(): AttributeInputs {
  return { inputs: new Map(), retired: new Map(), unimportant: new Map() };
}

/** A map's entries in key order, as a JSON object. */
function sortedRecord(map: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of [...map.keys()].sort()) out[id] = map.get(id)!;
  return out;
}

export function serializeAttributeInputs(a: AttributeInputs): string {
  const retired: Record<string, unknown> = {};
  for (const id of [...a.retired.keys()].sort()) {
    const r = a.retired.get(id)!;
    retired[id] = {
      input: r.input,
      human_readable_id: r.humanReadableId,
      context: r.context,
      embedding: r.embedding === null ? null : encodeVector(r.embedding),
      generation: r.generation,
      updated_generation: r.updatedGeneration,
    };
  }
  return `${JSON.stringify({ version: VERSION, inputs: sortedRecord(a.inputs), retired, unimportant: sortedRecord(a.unimportant), ...(a.model === undefined ? {} : { model: a.model }) })}\n`;
}

const isInt = (x: unknown): x is number => Number.isSafeInteger(x);

export function parseAttributeInputs(text: string, label: string): AttributeInputs {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new IndexFileError('index_damaged', `${label}: not valid JSON (${(error as Error).message})`);
  }
  const v = value as {
    version?: unknown;
    inputs?: unknown;
    retired?: unknown;
    unimportant?: unknown;
    model?: unknown;
  } | null;
  const isObject = (x: unknown): x is Record<string, unknown> =>
    x !== null && typeof x === 'object' && !Array.isArray(x);
  if (
    !isObject(v) ||
    v.version !== VERSION ||
    !isObject(v.inputs) ||
    !isObject(v.retired) ||
    !(v.unimportant === undefined || isObject(v.unimportant)) ||
    !(v.model === undefined || typeof v.model === 'string')
  ) {
    throw new IndexFileError(
      'index_damaged',
      `${label}: expected { "version": ${VERSION}, "inputs": {…}, "retired": {…}, "unimportant": {…}, "model": "…" }`,
    );
  }
  const out = emptyAttributeInputs();
  if (typeof v.model === 'string') out.model = v.model;
  for (const [key, map] of [
    ['inputs', out.inputs],
    ['unimportant', out.unimportant],
  ] as const) {
    for (const [id, hash] of Object.entries(v[key] ?? {})) {
      if (typeof hash !== 'string')
        throw new IndexFileError('index_damaged', `${label}: ${key}.${id} must be a string`);
      map.set(id, hash);
    }
  }
  for (const [id, raw] of Object.entries(v.retired)) {
    const r = raw as Record<string, unknown>;
    if (
      !isObject(r) ||
      typeof r.input !== 'string' ||
      typeof r.context !== 'string' ||
      !(r.embedding === null || typeof r.embedding === 'string') ||
      !isInt(r.human_readable_id) ||
      !isInt(r.generation) ||
      !isInt(r.updated_generation)
    ) {
      throw new IndexFileError(
        'index_damaged',
        `${label}: retired.${id} must have input, human_readable_id, context, embedding, generation and updated_generation`,
      );
    }
    out.retired.set(id, {
      input: r.input,
      humanReadableId: r.human_readable_id,
      context: r.context,
      embedding: r.embedding === null ? null : decodeVector(r.embedding as string, label, `retired ${id}`),
      generation: r.generation,
      updatedGeneration: r.updated_generation,
    });
  }
  return out;
}

/** The recorded inputs, or none when the file does not exist (older indexes). */
export async function readAttributeInputs(path: string, label: string): Promise<AttributeInputs> {
  const text = await readTextIfExists(path);
  return text === null ? emptyAttributeInputs() : parseAttributeInputs(text, label);
}
