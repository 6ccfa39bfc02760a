/**
 * The text shown for a node of any type (its `context`): what the retrieval context, the
 * visualisation tooltips and the UI display. Relationships show their phrases joined by `; `.
 */
import { relationshipContext } from './merge-decompositions.js';
import type {
  AttributeRow,
  EntityRow,
  HighLevelElementRow,
  RelationshipRow,
  SemanticUnitRow,
  TextRow,
  TitleRow,
} from './types.js';

interface TextTables {
  texts: ReadonlyMap<string, TextRow>;
  units: ReadonlyMap<string, SemanticUnitRow>;
  entities: ReadonlyMap<string, EntityRow>;
  relationships: ReadonlyMap<string, RelationshipRow>;
  attributes: ReadonlyMap<string, AttributeRow>;
  elements: ReadonlyMap<string, HighLevelElementRow>;
  titles: ReadonlyMap<string, TitleRow>;
}

export function nodeText(tables: TextTables, id: string): string | undefined {
  const rel = tables.relationships.get(id);
  if (rel) return relationshipContext(rel);
  return (
    tables.texts.get(id)?.context ??
    tables.units.get(id)?.context ??
    tables.entities.get(id)?.context ??
    tables.attributes.get(id)?.context ??
    tables.elements.get(id)?.context ??
    tables.titles.get(id)?.context
  );
}
