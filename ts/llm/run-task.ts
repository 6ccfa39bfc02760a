/**
 * Running one of the six tasks: render the prompt for the language, pick the schema and the
 * validator, and call the provider. The typed entry point for the pipeline and the search.
 */
import { buildRequest } from './prompts/index.js';
import { TASK_SCHEMAS, TASK_VALIDATORS } from './task-schemas.js';
import {
  type CallOptions,
  type Language,
  type Provider,
  STRUCTURED_TASKS,
  type StructuredTask,
  type Task,
  type TaskCall,
  type TaskInputs,
  type TaskOutputs,
  type TextTask,
  type Validator,
} from './types.js';

function isStructuredTask(task: Task): task is StructuredTask {
  return (STRUCTURED_TASKS as readonly string[]).includes(task);
}

export async function runTask<K extends Task>(
  provider: Provider,
  language: Language,
  task: K,
  input: TaskInputs[K],
  options: CallOptions = {},
): Promise<TaskOutputs[K]> {
  // `task` and `input` are correlated by K; TypeScript cannot see that through the union.
  const request = buildRequest({ task, language, input } as TaskCall);
  if (isStructuredTask(task)) {
    const validate = TASK_VALIDATORS[task] as Validator<unknown>;
    return (await provider.structured(request, TASK_SCHEMAS[task], validate, options)) as TaskOutputs[K];
  }
  return (await provider.chat(request, options)) as TaskOutputs[K];
}

/** A plain-text task (A, ANS) as text deltas, for a reply shown while it is generated. */
export function streamTask<K extends TextTask>(
  provider: Provider,
  language: Language,
  task: K,
  input: TaskInputs[K],
  options: CallOptions = {},
): AsyncIterable<string> {
  return provider.chatStream(buildRequest({ task, language, input } as TaskCall), options);
}
