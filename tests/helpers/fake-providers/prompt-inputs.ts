/**
 * Recovers the task and its inputs from a prompt rendered by ts/llm/prompts, so the fake
 * servers can answer a real SDK request with the local provider's reply. The inverse of
 * renderPrompt for our own prompts (list items come back flattened to one line, which is
 * how they were shown to the model).
 */
import { PROMPT_SETS, type PromptSet } from '../../../ts/llm/prompts/index.js';
import { type ChatMessage, TASKS, type Task, type TaskCall } from '../../../ts/llm/types.js';

function listAfter(lines: string[], start: number, none: string): { items: string[]; next: number } {
  const items: string[] = [];
  let i = start;
  if (lines[i] === none) return { items, next: i + 1 };
  while (i < lines.length) {
    const m = /^(?:\d+\.|-) (.*)$/.exec(lines[i] as string);
    if (!m) break;
    items.push(m[1] as string);
    i++;
  }
  return { items, next: i };
}

function parseUser(task: Task, set: PromptSet, user: string): TaskCall | undefined {
  const L = set.labels;
  const language = set.language;
  const lines = user.split('\n');
  switch (task) {
    case 'decompose':
      if (!user.startsWith(`${L.text}\n`)) return undefined;
      return { task, language, input: { text: user.slice(L.text.length + 1) } };
    case 'repair': {
      if (!lines[0]?.startsWith(L.relationship) || lines[1] !== L.entities) return undefined;
      const { items } = listAfter(lines, 2, L.none);
      return {
        task,
        language,
        input: { relationship: lines[0].slice(L.relationship.length), entities: items },
      };
    }
    case 'attribute': {
      if (!lines[0]?.startsWith(L.entity) || lines[2] !== L.units) return undefined;
      const units = listAfter(lines, 3, L.none);
      const relIndex = units.next + 1;
      if (lines[relIndex] !== L.relationships) return undefined;
      const rels = listAfter(lines, relIndex + 1, L.none);
      return {
        task,
        language,
        input: { entity: lines[0].slice(L.entity.length), units: units.items, relationships: rels.items },
      };
    }
    case 'community':
      if (lines[0] !== L.texts) return undefined;
      return { task, language, input: { texts: listAfter(lines, 1, L.none).items } };
    case 'query':
      if (!user.startsWith(L.question)) return undefined;
      return { task, language, input: { question: user.slice(L.question.length) } };
    case 'answer': {
      if (!user.startsWith(`${L.context}\n`)) return undefined;
      const cut = user.lastIndexOf(`\n\n${L.question}`);
      if (cut < 0) return undefined;
      return {
        task,
        language,
        input: {
          context: user.slice(L.context.length + 1, cut),
          question: user.slice(cut + 2 + L.question.length),
        },
      };
    }
  }
}

/**
 * The task of a conversation whose first system and user messages came from renderPrompt
 * (later turns, such as a repair request, do not change the task). Undefined when the
 * prompt is not one of ours.
 */
export function recognizePrompt(messages: readonly ChatMessage[]): TaskCall | undefined {
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  for (const set of Object.values(PROMPT_SETS)) {
    for (const task of TASKS) {
      // startsWith: plain-JSON mode appends the schema to the system message.
      if (system.startsWith(set.system[task])) return parseUser(task, set, user);
    }
  }
  return undefined;
}
