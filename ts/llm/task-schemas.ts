/**
 * JSON Schemas and validators of the structured tasks. The schemas are strict-mode compatible
 * (every property required, no additional properties) because OpenAI's strict json_schema
 * demands it; the validators are lenient where docs/method.md §3.3/§3.7 say so (a missing list
 * counts as empty, non-string members are ignored, empty items are dropped), so a slightly
 * off reply from a weaker model still counts.
 */
import type {
  DecompositionUnit,
  HighLevelElement,
  JsonSchemaSpec,
  StructuredTask,
  TaskOutputs,
  Validation,
  Validator,
} from './types.js';

const stringList = { type: 'array', items: { type: 'string' } } as const;

function objectSchema(properties: Record<string, unknown>): Record<string, unknown> {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

export const TASK_SCHEMAS: { readonly [K in StructuredTask]: JsonSchemaSpec } = {
  decompose: {
    name: 'text_decomposition',
    schema: objectSchema({
      Output: {
        type: 'array',
        items: objectSchema({
          semantic_unit: { type: 'string' },
          entities: stringList,
          relationships: stringList,
        }),
      },
    }),
  },
  repair: {
    name: 'relationship_repair',
    schema: objectSchema({
      source: { type: 'string' },
      relationship: { type: 'string' },
      target: { type: 'string' },
    }),
  },
  community: {
    name: 'high_level_elements',
    schema: objectSchema({
      high_level_elements: {
        type: 'array',
        items: objectSchema({ title: { type: 'string' }, description: { type: 'string' } }),
      },
    }),
  },
  query: { name: 'query_elements', schema: objectSchema({ elements: stringList }) },
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fail<T>(error: string): Validation<T> {
  return { ok: false, error };
}

/** Strings of a list, others ignored; a missing list is empty; anything else is an error. */
function strings(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) return undefined;
  return v.filter((x): x is string => typeof x === 'string');
}

const validateDecomposition: Validator<TaskOutputs['decompose']> = (v) => {
  if (!isObject(v) || !Array.isArray(v.Output)) return fail('expected an object with an array "Output"');
  const units: DecompositionUnit[] = [];
  for (const [i, item] of v.Output.entries()) {
    if (!isObject(item) || typeof item.semantic_unit !== 'string') {
      return fail(`Output[${i}]: expected an object with a string "semantic_unit"`);
    }
    const entities = strings(item.entities);
    const relationships = strings(item.relationships);
    if (!entities) return fail(`Output[${i}].entities: expected a list of strings`);
    if (!relationships) return fail(`Output[${i}].relationships: expected a list of strings`);
    if (item.semantic_unit.trim() === '') continue;
    units.push({ semantic_unit: item.semantic_unit, entities, relationships });
  }
  return { ok: true, value: { Output: units } };
};

const validateRepair: Validator<TaskOutputs['repair']> = (v) => {
  if (!isObject(v)) return fail('expected an object with "source", "relationship" and "target"');
  for (const k of ['source', 'relationship', 'target'] as const) {
    if (typeof v[k] !== 'string') return fail(`"${k}": expected a string`);
  }
  return {
    ok: true,
    value: {
      source: (v.source as string).trim(),
      relationship: (v.relationship as string).trim(),
      target: (v.target as string).trim(),
    },
  };
};

const validateCommunity: Validator<TaskOutputs['community']> = (v) => {
  if (!isObject(v) || !Array.isArray(v.high_level_elements)) {
    return fail('expected an object with an array "high_level_elements"');
  }
  const items: HighLevelElement[] = [];
  for (const [i, item] of v.high_level_elements.entries()) {
    if (!isObject(item)) return fail(`high_level_elements[${i}]: expected an object`);
    const title = typeof item.title === 'string' ? item.title.trim() : '';
    const description = typeof item.description === 'string' ? item.description.trim() : '';
    if (title && description) items.push({ title, description });
  }
  return { ok: true, value: { high_level_elements: items } };
};

const validateQuery: Validator<TaskOutputs['query']> = (v) => {
  if (!isObject(v)) return fail('expected an object with an array "elements"');
  const list = strings(v.elements);
  if (!list || v.elements === undefined) return fail('"elements": expected a list of strings');
  return { ok: true, value: { elements: list.map((s) => s.trim()).filter((s) => s.length > 0) } };
};

export const TASK_VALIDATORS: { readonly [K in StructuredTask]: Validator<TaskOutputs[K]> } = {
  decompose: validateDecomposition,
  repair: validateRepair,
  community: validateCommunity,
  query: validateQuery,
};

/** Plain-text replies: an empty reply is a failed attempt (docs/method.md §3.5). */
export function validateText(v: unknown): Validation<string> {
  if (typeof v !== 'string' || v.trim() === '') return fail('expected a non-empty text reply');
  return { ok: true, value: v.trim() };
}
