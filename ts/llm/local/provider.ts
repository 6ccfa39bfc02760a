/**
 * The offline `local` provider (docs/method.md §7.7): instant, deterministic, no network, no key,
 * never cached. It answers from the task inputs, not from the rendered prompt, and its
 * replies pass through the same validators as a real provider's.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { invalidReplyError } from '../provider-errors.js';
import { textPieces } from '../text-pieces.js';
import type {
  CallOptions,
  ChatRequest,
  EmbeddingBatch,
  JsonSchemaSpec,
  Provider,
  ProviderIdentity,
  Validator,
} from '../types.js';
import { featureHashBatch } from './feature-hash.js';
import {
  localAnswer,
  localAttribute,
  localCommunity,
  localDecompose,
  localQuery,
  localRepair,
} from './tasks.js';

export interface LocalProviderOptions {
  /** Reported as the model name (it changes nothing). */
  model?: string;
  /** Embedding length. */
  dim: number;
}

/** The reply of the local provider to one task, as a JSON value (text tasks: a string). */
export function localReply(request: ChatRequest): unknown {
  const lang = request.language;
  switch (request.task) {
    case 'decompose':
      return localDecompose(request.input.text, lang);
    case 'repair':
      return localRepair(request.input.relationship);
    case 'attribute':
      return localAttribute(request.input.entity, request.input.units, request.input.relationships, lang);
    case 'community':
      return localCommunity(request.input.texts, lang);
    case 'query':
      return localQuery(request.input.question, lang);
    case 'answer':
      return localAnswer(request.input.context, request.input.question, lang);
  }
}

export class LocalProvider implements Provider {
  readonly identity: ProviderIdentity;
  readonly #dim: number;

  constructor(options: LocalProviderOptions) {
    if (!Number.isInteger(options.dim) || options.dim < 1)
      throw new RangeError('dim must be a positive integer');
    this.#dim = options.dim;
    this.identity = {
      provider: 'local',
      baseUrl: null,
      model: options.model ?? 'local',
      params: { dim: options.dim },
    };
  }

  async chat(request: ChatRequest, options: CallOptions = {}): Promise<string> {
    options.signal?.throwIfAborted();
    const reply = localReply(request);
    return typeof reply === 'string' ? reply : JSON.stringify(reply);
  }

  /**
   * The reply in word pieces, one per turn of the event loop, so a server really sends the
   * first piece before the last one exists (what a streaming model does, without the wait).
   */
  async *chatStream(
    request: ChatRequest,
    options: CallOptions = {},
  ): AsyncGenerator<string, void, undefined> {
    const reply = await this.chat(request, options);
    for (const piece of textPieces(reply)) {
      await nextTurn();
      options.signal?.throwIfAborted();
      yield piece;
    }
  }

  async structured<T>(
    request: ChatRequest,
    _schema: JsonSchemaSpec,
    validate: Validator<T>,
    options: CallOptions = {},
  ): Promise<T> {
    options.signal?.throwIfAborted();
    const r = validate(localReply(request));
    if (!r.ok) {
      throw invalidReplyError(
        { provider: 'local', section: 'model_config', model: this.identity.model, secrets: [] },
        `${request.task} reply`,
        r.error,
      );
    }
    return r.value;
  }

  async embed(texts: readonly string[], options: CallOptions = {}): Promise<EmbeddingBatch> {
    options.signal?.throwIfAborted();
    return { vectors: featureHashBatch(texts, this.#dim), dim: this.#dim };
  }
}
