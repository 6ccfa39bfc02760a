/**
 * A language's prompts. Adding a language = writing one PromptSet, registering it in
 * ./index.ts and allowing the value of `config.language` in the config schema.
 */
import type { Language, Task } from '../types.js';

export interface PromptLabels {
  /** Block labels end with a colon and are followed by a new line. */
  text: string;
  entities: string;
  units: string;
  relationships: string;
  texts: string;
  context: string;
  /** Inline labels are followed by the value on the same line. */
  relationship: string;
  entity: string;
  question: string;
  /** Shown for an empty list. */
  none: string;
}

export interface PromptSet {
  language: Language;
  /** System message per task. */
  system: Readonly<Record<Task, string>>;
  labels: PromptLabels;
  /** Appended when a server without json_schema support gets plain JSON mode instead. */
  jsonFallback: (schemaJson: string) => string;
  /** Sent once after an invalid structured reply. */
  repairRequest: (error: string) => string;
}
