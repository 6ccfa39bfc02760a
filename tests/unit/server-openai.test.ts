/**
 * The OpenAI-compatible endpoint (issue 16 item 3) with the official `openai` SDK as the
 * client, against the app served on 127.0.0.1 with a recording fake engine: the models
 * list, the question and earlier turns, sources in the text and as an extra field, usage,
 * and the errors the SDK surfaces. Plus app.request() checks of the message validation.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../ts/server/app.js';
import type { AnswerOptions, SearchEngine } from '../../ts/server/engine.js';
import { questionAndHistory } from '../../ts/server/openai-compat.js';
import { type RunningServer, serveApp } from '../../ts/server/serve.js';

const KEY = 'sdk-key-0123456789abcdef';
const SOURCES = [
  { document: 'a.md', chunks: ['c1'], items: [1, 3], cited: [3] },
  { document: 'notes/b.md', chunks: ['c2'], items: [2], cited: [] },
];
const CITATIONS = [{ n: 3, id: 'u1', type: 'semantic_unit' as const, document: 'a.md', chunk: 'c1' }];

const calls: { question: string; options: AnswerOptions | undefined }[] = [];
const engine: SearchEngine = {
  status: async () => ({ ready: true, generation: 1, nodes: 10, vectors: 4 }),
  retrieve: async () => ({ retrievalInfo: 'ctx', retrievalTokens: 2 }),
  answer: async (question, _signal, options) => {
    calls.push({ question, options });
    return {
      response: `About ${question}: yes [3].`,
      responseTokens: 5,
      retrievalInfo: 'ctx',
      retrievalTokens: 40,
      sources: SOURCES,
      citations: CITATIONS,
    };
  },
};

let server: RunningServer;
let client: OpenAI;
beforeAll(async () => {
  server = await serveApp(createApp({ engine, apiKey: KEY, modelName: 'observatory' }), {
    host: '127.0.0.1',
    port: 0,
  });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
});

describe('/v1 through the openai SDK', () => {
  it('lists the index as a model', async () => {
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    expect(models.map((m) => [m.id, m.object, m.owned_by])).toEqual([['observatory', 'model', 'noderag']]);
    expect((await client.models.retrieve('observatory')).id).toBe('observatory');
  });

  it('answers the last user message, earlier turns as the conversation, sources in text and field', async () => {
    calls.length = 0;
    const completion = await client.chat.completions.create({
      model: 'observatory',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Who founded it?' },
        { role: 'assistant', content: 'Margaret Okafor [1].' },
        { role: 'user', content: [{ type: 'text', text: 'When?' }] },
      ],
    });
    expect(calls).toEqual([
      {
        question: 'When?',
        options: {
          history: [
            { role: 'user', content: 'Who founded it?' },
            { role: 'assistant', content: 'Margaret Okafor [1].' },
          ],
        },
      },
    ]);
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('observatory');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.choices[0]?.message.content).toBe('About When?: yes [3].\n\nSources:\n[3] a.md');
    expect(completion.usage).toEqual({ prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 });
    const extra = completion as unknown as { sources: typeof SOURCES; citations: typeof CITATIONS };
    expect(extra.sources).toEqual(SOURCES);
    expect(extra.citations).toEqual(CITATIONS);
  });

  it('streams: the answer in pieces, the source list, sources on the last chunk, usage, [DONE]', async () => {
    calls.length = 0;
    const stream = await client.chat.completions.create({
      model: 'observatory',
      messages: [{ role: 'user', content: 'Is it open?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(calls.map((c) => c.question)).toEqual(['Is it open?']);
    expect(text).toBe('About Is it open?: yes [3].\n\nSources:\n[3] a.md');
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    // More than one content piece: the answer word by word.
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(4);
    const stop = chunks.find((c) => c.choices[0]?.finish_reason === 'stop');
    expect((stop as unknown as { sources: unknown }).sources).toEqual(SOURCES);
    expect((stop as unknown as { citations: unknown }).citations).toEqual(CITATIONS);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('the SDK surfaces our errors: wrong key, unknown model, bad messages', async () => {
    const wrong = new OpenAI({
      baseURL: `${server.url}/v1`,
      apiKey: 'not-the-key-0123456789',
      maxRetries: 0,
    });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 });
    await expect(
      client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 404, message: expect.stringContaining('serves "observatory"') });
    await expect(
      client.chat.completions.create({ model: 'observatory', messages: [{ role: 'system', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('no "user" message') });
  });
});

describe('message validation', () => {
  const app = createApp({ engine, modelName: 'm' });
  const chat = (body: unknown) =>
    app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('rejects what it cannot answer, naming the field', async () => {
    const cases: [unknown, number, string, string][] = [
      [{ messages: [] }, 400, 'invalid_messages', 'messages'],
      [{ messages: 'hi' }, 400, 'invalid_messages', 'messages'],
      [{ messages: [{ role: 'robot', content: 'x' }] }, 400, 'invalid_messages', 'messages[0].role'],
      [
        { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] },
        400,
        'invalid_messages',
        'messages[0].content[0]',
      ],
      [
        { messages: [{ role: 'user', content: '  ' }] },
        400,
        'empty_question',
        '"messages[0].content" is empty',
      ],
      [
        {
          messages: [
            { role: 'system', content: 'be brief' },
            { role: 'user', content: 'x'.repeat(8001) },
          ],
        },
        400,
        'question_too_long',
        '"messages[1].content" has 8001 characters',
      ],
      [{ model: 'x', messages: [{ role: 'user', content: 'q' }] }, 404, 'model_not_found', '"m"'],
      [{ messages: [{ role: 'user', content: 'q' }], n: 2 }, 400, 'invalid_n', '"n"'],
      [{ messages: [{ role: 'user', content: 'q' }], stream: 'yes' }, 400, 'invalid_stream', '"stream"'],
      [
        { messages: [{ role: 'user', content: 'q' }], stream: true, stream_options: 1 },
        400,
        'invalid_stream_options',
        'include_usage',
      ],
      [
        { messages: [{ role: 'user', content: 'q' }], stream: true, stream_options: [1] },
        400,
        'invalid_stream_options',
        'include_usage',
      ],
      [
        { messages: [{ role: 'user', content: 'q' }], stream_options: { include_usage: true } },
        400,
        'invalid_stream_options',
        'only allowed with "stream": true',
      ],
    ];
    for (const [body, status, code, mentions] of cases) {
      const res = await chat(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      const err = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(err.code).toBe(code);
      expect(err.message).toContain(mentions);
    }
    // A null model (or n) is one left out, as for every optional field.
    expect((await chat({ model: null, messages: [{ role: 'user', content: 'q' }] })).status).toBe(200);
    expect((await chat({ n: null, messages: [{ role: 'user', content: 'q' }] })).status).toBe(200);
    expect((await app.request('/v1/models', { method: 'POST' })).status).toBe(405);
    const one = await app.request('/v1/models/m', { method: 'POST' });
    expect(one.status).toBe(405);
    expect(one.headers.get('allow')).toBe('GET, HEAD');
    expect((await app.request('/v1/modelsx')).status).toBe(404);
    expect((await app.request('/v1/chat/completions')).status).toBe(405);
  });

  it('keeps the last user message as the question and the most recent turns', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `t${i}`,
    }));
    const { question, history } = questionAndHistory([...many, { role: 'user', content: 'last' }]);
    expect(question).toBe('last');
    expect(history).toHaveLength(20);
    expect(history[19]).toEqual({ role: 'assistant', content: 't29' });
    // A trailing assistant message (a prefill) is not a question.
    expect(
      questionAndHistory([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ]),
    ).toEqual({
      question: 'q',
      history: [],
    });
  });

  it('an earlier turn keeps its text and refusal parts and drops an image; the question must be text', () => {
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    expect(
      questionAndHistory([
        { role: 'user', content: [{ type: 'text', text: 'What is in this photo?' }, image] },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot see images.' }] },
        { role: 'user', content: 'Who founded Halden Observatory?' },
      ]),
    ).toEqual({
      question: 'Who founded Halden Observatory?',
      history: [
        { role: 'user', content: 'What is in this photo?' },
        { role: 'assistant', content: 'I cannot see images.' },
      ],
    });
    expect(() =>
      questionAndHistory([{ role: 'user', content: [{ type: 'text', text: 'q' }, image] }]),
    ).toThrow('messages[0].content[1]: only {"type": "text", "text": string} content parts are supported');
  });
});
