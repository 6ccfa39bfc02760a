/**
 * The prompt manager: renders the messages of a task in the configured language. The layout
 * of each user message is fixed (labels, numbered lists, the data block last where §3.10
 * asks for it), so it is stable for the response cache.
 */
import type { ChatMessage, ChatRequest, Language, TaskCall } from '../types.js';
import { CHINESE } from './chinese.js';
import { ENGLISH } from './english.js';
import type { PromptSet } from './prompt-set.js';

export type { PromptLabels, PromptSet } from './prompt-set.js';

export const PROMPT_SETS: Readonly<Record<Language, PromptSet>> = {
  English: ENGLISH,
  Chinese: CHINESE,
};

export function promptSet(language: Language): PromptSet {
  return PROMPT_SETS[language];
}

/** List items are shown one per line: inner line breaks become spaces. */
function flattenItem(s: string): string {
  return s.trim().replace(/\s*\n\s*/g, ' ');
}

function numbered(items: readonly string[], none: string): string {
  if (items.length === 0) return none;
  return items.map((s, i) => `${i + 1}. ${flattenItem(s)}`).join('\n');
}

function bulleted(items: readonly string[], none: string): string {
  if (items.length === 0) return none;
  return items.map((s) => `- ${flattenItem(s)}`).join('\n');
}

function userMessage(call: TaskCall, set: PromptSet): string {
  const L = set.labels;
  switch (call.task) {
    case 'decompose':
      return `${L.text}\n${call.input.text}`;
    case 'repair':
      return `${L.relationship}${flattenItem(call.input.relationship)}\n${L.entities}\n${bulleted(call.input.entities, L.none)}`;
    case 'attribute':
      return [
        `${L.entity}${flattenItem(call.input.entity)}`,
        '',
        L.units,
        numbered(call.input.units, L.none),
        '',
        L.relationships,
        numbered(call.input.relationships, L.none),
      ].join('\n');
    case 'community':
      return `${L.texts}\n${numbered(call.input.texts, L.none)}`;
    case 'query':
      return `${L.question}${call.input.question}`;
    case 'answer':
      return `${L.context}\n${call.input.context}\n\n${L.question}${call.input.question}`;
  }
}

/** The messages sent to a real provider for this task. */
export function renderPrompt(call: TaskCall): ChatMessage[] {
  const set = promptSet(call.language);
  const history = call.task === 'answer' ? (call.input.history ?? []) : [];
  return [
    { role: 'system', content: set.system[call.task] },
    ...history.map((m) => ({ role: m.role, content: m.content })),
    { role: 'user', content: userMessage(call, set) },
  ];
}

/** A ready request: the task, its inputs and the rendered prompt. */
export function buildRequest(call: TaskCall): ChatRequest {
  return { ...call, messages: renderPrompt(call) } as ChatRequest;
}
