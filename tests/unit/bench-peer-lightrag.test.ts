/**
 * bench/peer/fake-server.ts answering LightRAG's prompts (bench peer, issue 20): the templates
 * below have the shape of lightrag-hku 1.5.7's (Python `str.format` fields, `{{`/`}}` escapes,
 * the fenced `---Input Text---` block); the bench reads the real ones from the installed package.
 */
import { describe, expect, it } from 'vitest';
import {
  type LightragTemplates,
  lightragMatchersFor,
  recognizeLightragPrompt,
} from '../../bench/peer/fake-server.js';
import { localDecompose } from '../../ts/llm/local/tasks.js';

const T: LightragTemplates = {
  entity_extraction_user_prompt:
    '---Task---\nExtract entities.\nOutput `{completion_delimiter}` last, in {language}.\n\n{heading_context_block}---Input Text---\n```\n{input_text}\n```\n\n---Output---\n',
  entity_continue_extraction_user_prompt:
    '---Task---\nBased on the last extraction task, identify any missed entities, in {language}.\n\n---Output---\n',
  keywords_extraction:
    '---Role---\nYou are an expert keyword extractor.\nReturn `{{"high_level_keywords": [], "low_level_keywords": []}}`.\n{examples}\n\n---Real Data---\nUser Query: {query}\n\n---Output---\nOutput:',
  summarize_entity_descriptions:
    '---Input---\n{description_type} Name: {description_name}\n\nDescription List:\n\n```\n{description_list}\n```\n\n---Output---\n',
  tuple_delimiter: '<|#|>',
  completion_delimiter: '<|COMPLETE|>',
};
/** Python's str.format for these templates, then LightRAG's strip before sending. */
const fill = (template: string, f: Record<string, string>) =>
  template
    .replace(/\{\{|\}\}|\{(\w+)\}/g, (m, k: string | undefined) => (k ? (f[k] ?? '') : (m[0] as string)))
    .trim();
const ms = lightragMatchersFor(T);

describe('the peer fake server answers LightRAG from the local decomposition', () => {
  const text =
    'Marie Curie\n\nMarie Curie was a physicist born in Warsaw in 1867. Warsaw is the capital of Poland.';
  const prompt = fill(T.entity_extraction_user_prompt, {
    completion_delimiter: '<|COMPLETE|>',
    language: 'English',
    heading_context_block: '',
    input_text: text,
  });

  it('extraction: one entity row per distinct entity, relation rows from the same relationships', () => {
    const hit = recognizeLightragPrompt(T, ms, prompt);
    expect(hit?.task).toBe('extract');
    const rows = (hit?.content ?? '').split('\n');
    expect(rows.at(-1)).toBe('<|COMPLETE|>');
    const entities = rows.filter((r) => r.startsWith('entity<|#|>')).map((r) => r.split('<|#|>'));
    const relations = rows.filter((r) => r.startsWith('relation<|#|>')).map((r) => r.split('<|#|>'));
    expect(entities.length + relations.length + 1).toBe(rows.length);
    for (const e of entities) expect(e).toHaveLength(4);
    for (const r of relations) {
      expect(r).toHaveLength(5);
      expect(r[1]).not.toBe(r[2]);
    }
    const { Output } = localDecompose(text, 'English');
    const want = [...new Set(Output.flatMap((u) => u.entities))];
    expect(entities.map((e) => e[1])).toEqual(want);
    expect(relations.length).toBe(new Set(Output.flatMap((u) => u.relationships)).size);
    expect(entities.find((e) => e[1] === 'WARSAW')?.[3]).toBe(
      'Marie Curie was a physicist born in Warsaw in 1867.',
    );
  });

  it('gleaning (matched on the last user message): the completion delimiter only', () => {
    const glean = fill(T.entity_continue_extraction_user_prompt, { language: 'English' });
    expect(recognizeLightragPrompt(T, ms, glean)).toEqual({ task: 'glean', content: '<|COMPLETE|>' });
  });

  it('keywords: names and years low-level, other words high-level', () => {
    const q = fill(T.keywords_extraction, {
      examples: '{"high_level_keywords": ["<high_level_keyword>"]}',
      query: 'Which river flows through the capital of Poland?',
    });
    const hit = recognizeLightragPrompt(T, ms, q);
    expect(hit?.task).toBe('keywords');
    const k = JSON.parse(hit?.content ?? '{}') as Record<string, string[]>;
    expect(k.low_level_keywords).toEqual(['Poland']);
    expect(k.high_level_keywords).toEqual(expect.arrayContaining(['river', 'capital']));
    expect(k.high_level_keywords).not.toContain('Poland');
  });

  it('summary: the unique descriptions joined', () => {
    const s = fill(T.summarize_entity_descriptions, {
      description_type: 'Entity',
      description_name: 'WARSAW',
      description_list: ['a', 'b', 'a'].map((d) => JSON.stringify({ Description: d })).join('\n'),
    });
    expect(recognizeLightragPrompt(T, ms, s)).toEqual({ task: 'summary', content: 'a b' });
  });

  it('an unknown prompt is not taken for one of LightRAG', () => {
    expect(recognizeLightragPrompt(T, ms, 'Summarise this text: Warsaw.')).toBeUndefined();
  });
});
