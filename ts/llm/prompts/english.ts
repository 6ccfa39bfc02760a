/**
 * English prompts (docs/method.md §3.10). Each asks for output in English. The worked example of
 * D is our own text.
 */
import type { PromptSet } from './prompt-set.js';

const DECOMPOSE_EXAMPLE_OUTPUT = JSON.stringify({
  Output: [
    {
      semantic_unit:
        'In 1898, Marie Curie and Pierre Curie announced in Paris that they had discovered a new element, polonium.',
      entities: ['1898', 'MARIE CURIE', 'PIERRE CURIE', 'PARIS', 'POLONIUM'],
      relationships: [
        'MARIE CURIE, DISCOVERED, POLONIUM',
        'PIERRE CURIE, DISCOVERED, POLONIUM',
        'MARIE CURIE, WORKED WITH, PIERRE CURIE',
        'MARIE CURIE, ANNOUNCED THE DISCOVERY IN, PARIS',
      ],
    },
    {
      semantic_unit: 'Polonium was named after Poland, the homeland of Marie Curie.',
      entities: ['POLONIUM', 'POLAND', 'MARIE CURIE'],
      relationships: ['POLONIUM, NAMED AFTER, POLAND', 'POLAND, HOMELAND OF, MARIE CURIE'],
    },
  ],
});

export const ENGLISH: PromptSet = {
  language: 'English',
  system: {
    decompose: [
      'You break a text into semantic units and extract the entities and relationships of each unit.',
      '',
      'Split the text into semantic units, one for each distinct event, activity or claim. For each unit give:',
      '1. "semantic_unit": a paraphrase of the unit that stands on its own, understandable without the rest of the text, keeping every important detail (names, numbers, dates, places).',
      '2. "entities": the entities the unit mentions, taken from the text itself rather than from your paraphrase: people, organisations, places, times at exactly the precision written (a year stays a year), products and key concepts. Write every entity in CAPITAL LETTERS.',
      '3. "relationships": relationships among those entities, each one string "SOURCE, RELATION, TARGET", where SOURCE and TARGET are entities from the list and RELATION is a short phrase.',
      '',
      'Reply with JSON only, in this shape: {"Output": [{"semantic_unit": "...", "entities": ["..."], "relationships": ["..."]}]}. Write in English.',
      '',
      'Example',
      'Text:',
      "In 1898 Marie and Pierre Curie announced in Paris that they had found a new element, polonium. They named it after Poland, Marie's homeland.",
      `Output: ${DECOMPOSE_EXAMPLE_OUTPUT}`,
    ].join('\n'),
    repair: [
      'You repair one malformed relationship string from a knowledge-graph extraction.',
      'Given the string and the entities of its semantic unit, return the source entity, the relation and the target entity. Take source and target from the entity list when they appear there; the relation is a short phrase.',
      'Reply with JSON only: {"source": "...", "relationship": "...", "target": "..."}. Write in English.',
    ].join('\n'),
    attribute: [
      'You write a concise, factual profile of one entity: its key attributes and its most important relationships.',
      'Use only the semantic units and relationships supplied; add nothing from elsewhere.',
      'Write plain text of at most about 300 words, with no preamble, headings or lists. Write in English.',
    ].join('\n'),
    community: [
      'You read the texts of one cluster of related information and identify its most significant distinct themes, concepts or insights: typically 1 to 6.',
      'For each give a short title and a description of one to three sentences. Merge near-duplicates. Prefer significance and diversity over covering every text.',
      'Reply with JSON only: {"high_level_elements": [{"title": "...", "description": "..."}]}. Write in English.',
    ].join('\n'),
    query: [
      'You extract the key entities and terms of a question as short phrases, to look them up by name in a knowledge graph.',
      'Keep names as written in the question. Add closely related terms only when the intent is clear. Leave out generic nouns such as "information", "thing" or "way".',
      'Reply with JSON only: {"elements": ["..."]}. Write in English.',
    ].join('\n'),
    answer: [
      'You answer questions from context retrieved from a knowledge base.',
      'Answer from the context, adding well-established general knowledge only where it is needed. If the context is not enough to answer, say so. Never invent facts, names, numbers or sources.',
      'The context items are numbered [1], [2], … across the whole context. After each statement taken from the context, cite the items it comes from by their numbers in square brackets, such as [2] or [1][4]. Cite only numbers that appear in the context.',
      'Write several paragraphs when the question warrants it. Write in English.',
    ].join('\n'),
  },
  labels: {
    text: 'Text:',
    relationship: 'Relationship: ',
    entities: 'Entities:',
    entity: 'Entity: ',
    units: 'Semantic units:',
    relationships: 'Relationships:',
    texts: 'Texts:',
    question: 'Question: ',
    context: 'Context:',
    none: '(none)',
  },
  jsonFallback: (schema: string) =>
    `Reply with one JSON object only, no other text, matching this JSON Schema:\n${schema}`,
  repairRequest: (error: string) =>
    `Your reply was not valid: ${error}. Reply again with the corrected JSON object only.`,
};
