import { describe, expect, it } from 'vitest';
import { PROMPT_SETS, renderPrompt } from '../../ts/llm/prompts/index.js';
import { parseJsonReply } from '../../ts/llm/structured.js';
import { TASK_SCHEMAS, TASK_VALIDATORS, validateText } from '../../ts/llm/task-schemas.js';
import { TASKS, type TaskCall } from '../../ts/llm/types.js';
import { recognizePrompt } from '../helpers/fake-providers/prompt-inputs.js';

const CALLS: TaskCall[] = [
  {
    task: 'decompose',
    language: 'English',
    input: { text: 'Marie Curie was born in Warsaw.\n\nShe moved.' },
  },
  { task: 'repair', language: 'English', input: { relationship: 'A | rel | B', entities: ['A', 'B'] } },
  {
    task: 'attribute',
    language: 'English',
    input: { entity: 'MARIE CURIE', units: ['u1', 'u2'], relationships: ['MARIE CURIE born in WARSAW'] },
  },
  { task: 'attribute', language: 'Chinese', input: { entity: '居里夫人', units: [], relationships: ['r'] } },
  { task: 'community', language: 'Chinese', input: { texts: ['居里夫人在巴黎。', '她获得诺贝尔奖。'] } },
  { task: 'query', language: 'English', input: { question: 'Who discovered radium?' } },
  {
    task: 'answer',
    language: 'Chinese',
    input: { context: '------------text-------------\n1. 一段文字\n\n', question: '谁发现了镭？' },
  },
];

describe('prompt sets', () => {
  it('English and Chinese define every task, each asking for its own language', () => {
    for (const set of Object.values(PROMPT_SETS)) {
      for (const task of TASKS) {
        const text = set.system[task];
        expect(text.length, `${set.language}/${task}`).toBeGreaterThan(50);
        expect(text).toContain(set.language === 'English' ? 'Write in English' : '请用中文书写');
      }
    }
  });

  it('D has a worked example and puts the chunk last; ANS puts the context before the question', () => {
    const [sys, user] = renderPrompt(CALLS[0] as TaskCall);
    expect(sys?.content).toMatch(/Example\nText:\n/);
    expect(user?.content.endsWith('She moved.')).toBe(true);
    const ans = renderPrompt(CALLS[6] as TaskCall)[1]?.content ?? '';
    expect(ans.indexOf('上下文：')).toBeLessThan(ans.indexOf('问题：'));
  });

  it('the fake servers recover every task input from the rendered prompt', () => {
    for (const call of CALLS) {
      expect(recognizePrompt(renderPrompt(call)), call.task).toEqual(call);
    }
  });

  it('rendering is stable (it is part of the cache key)', () => {
    expect(JSON.stringify(renderPrompt(CALLS[2] as TaskCall))).toBe(
      JSON.stringify(renderPrompt(CALLS[2] as TaskCall)),
    );
    expect(renderPrompt(CALLS[2] as TaskCall)[1]?.content).toBe(
      'Entity: MARIE CURIE\n\nSemantic units:\n1. u1\n2. u2\n\nRelationships:\n1. MARIE CURIE born in WARSAW',
    );
  });
});

describe('schemas and validators', () => {
  it('schemas are strict-mode compatible: every property required, no extras', () => {
    const walk = (s: Record<string, unknown>) => {
      if (s.type === 'object') {
        expect(s.additionalProperties).toBe(false);
        expect(s.required).toEqual(Object.keys(s.properties as object));
        for (const v of Object.values(s.properties as Record<string, Record<string, unknown>>)) walk(v);
      }
      if (s.type === 'array') walk(s.items as Record<string, unknown>);
    };
    for (const spec of Object.values(TASK_SCHEMAS)) walk(spec.schema);
  });

  it('D validation is lenient where §3.3 says so', () => {
    const v = TASK_VALIDATORS.decompose({
      Output: [
        { semantic_unit: 'A met B.', entities: ['A', 3, 'B'] },
        { semantic_unit: '   ', entities: [] },
      ],
    });
    expect(v).toEqual({
      ok: true,
      value: { Output: [{ semantic_unit: 'A met B.', entities: ['A', 'B'], relationships: [] }] },
    });
    expect(TASK_VALIDATORS.decompose({ Output: [] }).ok).toBe(true);
    expect(TASK_VALIDATORS.decompose({ output: [] })).toEqual({
      ok: false,
      error: 'expected an object with an array "Output"',
    });
    expect(TASK_VALIDATORS.decompose({ Output: [{ entities: [] }] }).ok).toBe(false);
    expect(TASK_VALIDATORS.decompose({ Output: [{ semantic_unit: 'x', entities: 'A' }] }).ok).toBe(false);
  });

  it('C drops empty items; Q trims and drops empty elements; R needs three strings', () => {
    expect(
      TASK_VALIDATORS.community({
        high_level_elements: [
          { title: ' T ', description: 'D' },
          { title: '', description: 'x' },
        ],
      }),
    ).toEqual({ ok: true, value: { high_level_elements: [{ title: 'T', description: 'D' }] } });
    expect(TASK_VALIDATORS.query({ elements: [' Paris ', '', 5] })).toEqual({
      ok: true,
      value: { elements: ['Paris'] },
    });
    expect(TASK_VALIDATORS.query({}).ok).toBe(false);
    expect(TASK_VALIDATORS.repair({ source: 'a', relationship: 'r' }).ok).toBe(false);
    expect(validateText('  ')).toEqual({ ok: false, error: 'expected a non-empty text reply' });
  });

  it('JSON replies may come fenced', () => {
    expect(parseJsonReply('```json\n{"elements": []}\n```')).toEqual({ ok: true, value: { elements: [] } });
    expect(parseJsonReply('Sure: {}').ok).toBe(false);
  });
});
