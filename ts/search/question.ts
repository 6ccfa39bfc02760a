/**
 * Validation of the `{question}` body (docs/method.md §7.2): one function shared by the HTTP
 * server and the in-process API, so both reject the same inputs with the same codes.
 */
import { InvalidQuestionError } from '../errors.js';

const MAX_QUESTION_CHARS = 8000;

/**
 * The question, or InvalidQuestionError naming `field` (the OpenAI-compatible route names the
 * message it took the question from).
 */
export function validateQuestion(question: unknown, field = 'question'): string {
  if (question === undefined)
    throw new InvalidQuestionError(
      'missing_question',
      `"${field}" is missing: a question (a string) is required`,
    );
  if (typeof question !== 'string') {
    throw new InvalidQuestionError(
      'invalid_question',
      `"${field}" must be a string, got ${jsonType(question)}`,
    );
  }
  if (question.trim() === '') throw new InvalidQuestionError('empty_question', `"${field}" is empty`);
  // Characters are code points: an emoji is one, not its two UTF-16 units.
  if (question.length > MAX_QUESTION_CHARS) {
    const chars = [...question].length;
    if (chars > MAX_QUESTION_CHARS) {
      throw new InvalidQuestionError(
        'question_too_long',
        `"${field}" has ${chars} characters; the limit is ${MAX_QUESTION_CHARS}`,
      );
    }
  }
  return question;
}

/**
 * The earlier turns of `answer(q, { history })`: an array of `{ role: 'user' | 'assistant',
 * content: string }`, or InvalidQuestionError naming the first bad entry (a library caller's
 * mistake failed deep inside, as `history.map is not a function`, or went to the model).
 */
export function validateHistory(history: unknown): void {
  if (history === undefined) return;
  if (!Array.isArray(history)) {
    throw new InvalidQuestionError(
      'invalid_history',
      `history must be an array of turns, got ${jsonType(history)}`,
    );
  }
  history.forEach((turn: unknown, i) => {
    const t = turn as { role?: unknown; content?: unknown } | null;
    if (typeof t !== 'object' || t === null || Array.isArray(t)) {
      throw new InvalidQuestionError(
        'invalid_history',
        `history[${i}] must be an object, got ${jsonType(t)}`,
      );
    }
    if (t.role !== 'user' && t.role !== 'assistant') {
      throw new InvalidQuestionError(
        'invalid_history',
        `history[${i}].role must be "user" or "assistant", got ${JSON.stringify(t.role) ?? 'nothing'}`,
      );
    }
    if (typeof t.content !== 'string') {
      throw new InvalidQuestionError(
        'invalid_history',
        `history[${i}].content must be a string, got ${t.content === undefined ? 'nothing' : jsonType(t.content)}`,
      );
    }
  });
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
