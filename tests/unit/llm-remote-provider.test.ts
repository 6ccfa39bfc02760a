import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../ts/errors.js';
import { httpError, networkError } from '../../ts/llm/provider-errors.js';
import { decodeEmbedding, packEmbeddings, remoteSetup } from '../../ts/llm/remote-provider.js';

const base = { apiKey: 'sk-secret', baseUrl: null, model: 'text-embedding-3-small' } as const;

describe('remoteSetup: identity (cache key) and error context of the HTTP adapters', () => {
  it('embedding identity names the vendor’s dimension parameter and the requested length', () => {
    const openai = remoteSetup('openai', { ...base, section: 'embedding_config', dim: 512 }, 'dimensions');
    expect(openai.requestDim).toBe(512);
    expect(openai.identity).toEqual({
      provider: 'openai',
      baseUrl: null,
      model: 'text-embedding-3-small',
      params: { dimensions: 512 },
    });
    const gemini = remoteSetup(
      'gemini',
      {
        ...base,
        model: 'gemini-embedding-001',
        baseUrl: 'http://127.0.0.1:9',
        section: 'embedding_config',
        dim: 768,
      },
      'outputDimensionality',
    );
    expect(gemini.identity).toEqual({
      provider: 'gemini',
      baseUrl: 'http://127.0.0.1:9',
      model: 'gemini-embedding-001',
      params: { outputDimensionality: 768 },
    });
  });

  it('no length is requested for a model that cannot shorten (null in the identity)', () => {
    const s = remoteSetup(
      'openai',
      { ...base, model: 'my-local-embedder', section: 'embedding_config', dim: 384 },
      'dimensions',
    );
    expect(s.requestDim).toBeUndefined();
    expect(s.identity.params).toEqual({ dimensions: null });
  });

  it('chat identity records temperature (default 0) and max_tokens (default null)', () => {
    const chat = remoteSetup(
      'gemini',
      { ...base, model: 'm', section: 'model_config' },
      'outputDimensionality',
    );
    expect(chat.identity.params).toEqual({ temperature: 0, max_tokens: null });
    const set = remoteSetup(
      'openai',
      { ...base, model: 'm', section: 'model_config', temperature: 0.5, maxTokens: 100 },
      'dimensions',
    );
    expect(set.identity.params).toEqual({ temperature: 0.5, max_tokens: 100 });
  });

  it('the error context carries the key as a secret to redact, and none without a key', () => {
    const s = remoteSetup('openai', { ...base, section: 'model_config' }, 'dimensions');
    expect(s.ctx).toEqual({
      provider: 'openai',
      section: 'model_config',
      model: base.model,
      baseUrl: base.baseUrl,
      secrets: ['sk-secret'],
    });
    const keyless = remoteSetup(
      'openai',
      { ...base, apiKey: undefined, section: 'model_config' },
      'dimensions',
    );
    expect(keyless.ctx.secrets).toEqual([]);
  });
});

describe('packEmbeddings', () => {
  const { ctx } = remoteSetup('openai', { ...base, section: 'embedding_config' }, 'dimensions');

  it('packs rows in order into one row-major buffer', () => {
    const b = packEmbeddings(ctx, 2, [
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(b.dim).toBe(3);
    expect(Array.from(b.vectors)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('a reply with the wrong number of vectors is a retryable invalid reply', () => {
    const e = (() => {
      try {
        packEmbeddings(ctx, 3, [[1], [2]]);
      } catch (error) {
        return error;
      }
    })();
    expect(e).toBeInstanceOf(ProviderError);
    expect((e as ProviderError).retryable).toBe(true);
    expect((e as ProviderError).message).toMatch(/expected 3 vectors, got 2/);
  });

  it('vectors of different lengths in one reply are an invalid reply', () => {
    expect(() => packEmbeddings(ctx, 2, [[1, 2], [3]])).toThrow(/vectors of different lengths/);
  });

  it('empty vectors are a retryable invalid reply, not a model of dimension 0', () => {
    const e = (() => {
      try {
        packEmbeddings(ctx, 2, [[], []]);
      } catch (error) {
        return error;
      }
    })();
    expect(e).toBeInstanceOf(ProviderError);
    expect((e as ProviderError).retryable).toBe(true);
    expect((e as ProviderError).message).toMatch(/an embedding is empty/);
  });
});

describe('decodeEmbedding', () => {
  const { ctx } = remoteSetup('openai', { ...base, section: 'embedding_config' }, 'dimensions');

  it('reads base64 of little-endian float32 and passes lists of numbers through', () => {
    const bytes = Buffer.alloc(12);
    bytes.writeFloatLE(0.5, 0);
    bytes.writeFloatLE(-1.25, 4);
    bytes.writeFloatLE(3e-8, 8);
    expect(Array.from(decodeEmbedding(ctx, bytes.toString('base64')))).toEqual([
      0.5,
      -1.25,
      Math.fround(3e-8),
    ]);
    const list = [1, 2, 3];
    expect(decodeEmbedding(ctx, list)).toBe(list);
  });

  it('base64 that is not whole float32 values, or neither form, is an invalid reply', () => {
    expect(() => decodeEmbedding(ctx, Buffer.alloc(6).toString('base64'))).toThrow(
      /base64 embedding of 6 bytes is not float32/,
    );
    expect(() => decodeEmbedding(ctx, { x: 1 })).toThrow(/neither a list of numbers nor base64/);
  });

  it('a list holding null (a NaN some servers write so), a boolean or a string is an invalid reply', () => {
    // Stored in a Float32Array, null would become 0 and be cached as if the model said so.
    expect(() => decodeEmbedding(ctx, [0.5, null, 1])).toThrow(
      /value 1 of an embedding is null, not a number/,
    );
    expect(() => decodeEmbedding(ctx, [true, 1])).toThrow(/value 0 of an embedding is boolean/);
    expect(() => decodeEmbedding(ctx, ['1'])).toThrow(/value 0 of an embedding is string/);
  });
});

describe('provider error messages', () => {
  const ctx = {
    provider: 'openai' as const,
    section: 'model_config',
    model: 'm',
    secrets: ['gw_live_Zq7Xk2P9mW4rT8vB1nC6yH3jL5sD0fGa'],
  };

  it('redact the key before cutting a long message (a cut key would no longer match)', () => {
    const detail = `${'x'.repeat(280)} key=${ctx.secrets[0]} is not allowed`;
    const message = httpError(ctx, 400, detail).message;
    expect(message).not.toContain('gw_live_Zq7');
    expect(message).toContain('[redacted]');
  });
});

describe('networkError: where the connection was tried', () => {
  const ctx = { provider: 'openai' as const, section: 'model_config', model: 'm', secrets: [] };
  it('names base_url, without the user name and password a URL may hold', () => {
    const e = networkError(
      { ...ctx, baseUrl: 'http://alice:s3cret@llm.internal:8000/v1' },
      'connect ECONNREFUSED',
    );
    expect(e.message).toBe(
      'cannot reach provider openai (model_config, model m) at http://llm.internal:8000/v1 (model_config.base_url): connect ECONNREFUSED',
    );
  });
  it('without the query string or fragment either (where gateways take tokens)', () => {
    const e = networkError(
      { ...ctx, baseUrl: 'https://gw.internal/v1?token=abc123#frag' },
      'connect ECONNREFUSED',
    );
    expect(e.message).toBe(
      'cannot reach provider openai (model_config, model m) at https://gw.internal/v1 (model_config.base_url): connect ECONNREFUSED',
    );
    expect(networkError({ ...ctx, baseUrl: 'not a url?token=abc123' }, 'x').message).not.toContain('abc123');
  });
  it('says when base_url is not set (the provider’s own API)', () => {
    expect(networkError({ ...ctx, baseUrl: null }, 'getaddrinfo ENOTFOUND').message).toBe(
      'cannot reach provider openai (model_config, model m) at its default address (model_config.base_url is not set): getaddrinfo ENOTFOUND',
    );
  });
});
