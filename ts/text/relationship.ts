/**
 * Decomposition output rules (docs/method.md §3.3). Per unit: `normalizeEntities` gives the
 * entity list; `parseRelationship` applies steps 1–4 to each relationship string; a
 * `needs_repair` result is the caller's model call (step 5, prompt R) and, if that fails, a
 * drop (step 6); `finalizeUnit` then normalises the triples, drops same-entity ones and
 * appends missing ends to the entity list. `parseUnit` does the three for a whole unit in one
 * native call (finalising only when nothing needs repair). All in the Rust core, pure.
 */
import { callNative, native } from '../native.js';
import type { TextLanguage } from './language.js';

/** A relationship as three strings. */
export interface Triple {
  source: string;
  relation: string;
  target: string;
}

/** Which rule split a string: three comma parts, the unique entity-name split, or `|`/`;`/TAB/`->`. */
export type ParseMethod = 'comma' | 'entity_split' | 'separator';

export type RelationshipParse =
  | ({ status: 'parsed'; method: ParseMethod } & Triple)
  | { status: 'needs_repair' }
  | { status: 'empty' };

export interface DroppedTriple {
  /** Index into the triples given to `finalizeUnit`. */
  index: number;
  reason: 'same_entity' | 'empty_part';
}

export interface UnitRelationships {
  /** The unit's entities, then relationship ends that were missing, in order. */
  entities: string[];
  /** Kept relationships: ends `normEntity`-ed, relation `normText`-ed. */
  relationships: Triple[];
  dropped: DroppedTriple[];
}

/** `normEntity` each name, drop empty ones, remove duplicates (first occurrence wins). */
export function normalizeEntities(names: readonly string[], language: TextLanguage): string[] {
  return callNative(() => native.normalizeEntities([...names], language));
}

/**
 * Steps 1–4 for one `SOURCE, RELATION, TARGET` string. `unitEntities` must be the unit's list
 * from `normalizeEntities` (step 3 matches names containing commas against it). Parts are
 * trimmed but not yet normalised.
 */
export function parseRelationship(
  s: string,
  unitEntities: readonly string[],
  language: TextLanguage,
): RelationshipParse {
  const r = callNative(() => native.parseRelationship(s, [...unitEntities], language));
  if (r.status === 'parsed') {
    if (r.source == null || r.relation == null || r.target == null || r.method == null)
      throw new Error('parseRelationship: native result lacks a part');
    return { status: 'parsed', method: r.method, source: r.source, relation: r.relation, target: r.target };
  }
  return { status: r.status };
}

/** A unit through `parseUnit`: its entity list, each string's parse, and the finalised unit. */
export interface UnitParse {
  /** `normalizeEntities` of the unit's names. */
  entities: string[];
  /** `parseRelationship` of each string, in order. */
  parses: RelationshipParse[];
  /**
   * `finalizeUnit(entities, parsed triples in order)`, when no string needs repair; null
   * otherwise (the caller repairs, then calls `finalizeUnit`).
   */
  final: UnitRelationships | null;
}

/**
 * `normalizeEntities`, `parseRelationship` of each string and, when none needs repair,
 * `finalizeUnit`: the same results with one native call per unit.
 */
export function parseUnit(
  names: readonly string[],
  relationships: readonly string[],
  language: TextLanguage,
): UnitParse {
  const r = callNative(() => native.parseUnit([...names], [...relationships], language));
  const parses = r.parses.map((p): RelationshipParse => {
    if (p.status === 'parsed') {
      if (p.source == null || p.relation == null || p.target == null || p.method == null)
        throw new Error('parseUnit: native result lacks a part');
      return { status: 'parsed', method: p.method, source: p.source, relation: p.relation, target: p.target };
    }
    return { status: p.status };
  });
  return { entities: r.entities, parses, final: r.final ?? null };
}

/** The rules after parsing, over a unit's triples in output order (parsed and repaired alike). */
export function finalizeUnit(
  entities: readonly string[],
  triples: readonly Triple[],
  language: TextLanguage,
): UnitRelationships {
  return callNative(() =>
    native.finalizeUnit(
      [...entities],
      triples.map((t) => ({ source: t.source, relation: t.relation, target: t.target })),
      language,
    ),
  );
}
