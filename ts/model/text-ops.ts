/**
 * The text functions the index model needs (a fold and the hash id of each node kind it
 * creates, docs/method.md §0/§2.1). They live in the Rust core (ts/text/ids.ts is the one way
 * to make an id); this interface lets the model be tested with the real ones while keeping
 * ts/model free of a direct addon dependency.
 */
export interface TextOps {
  fold(s: string): string;
  /** `H("semantic_unit", norm_text(unit))`. */
  semanticUnitId(unit: string): string;
  /** `H("entity", name)` of a name already `norm_entity`-ed. */
  entityIdOfNormalized(name: string): string;
  /** `H("relationship", lo + ":" + hi)` of two entity ids in either order; null when they are equal. */
  relationshipId(entityIdA: string, entityIdB: string): string | null;
  /** `H("high_level_element", norm_text(description))`. */
  highLevelElementId(description: string): string;
  /** `H("high_level_element_title", elementId)`. */
  highLevelElementTitleId(elementId: string): string;
}
