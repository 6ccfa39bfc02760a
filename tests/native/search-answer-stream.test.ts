/**
 * NodeSearch.answerStream (issue 16 item 2, docs/method.md §7.4) on the hand-built Curie index
 * with the config's own providers (`local`): deltas as the provider streams them, then the
 * same result `answer` gives; errors before the first delta thrown by the first step; a
 * stand-in provider without `stream` answers in one delta.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NodeConfig } from '../../ts/config/node-config.js';
import { InvalidQuestionError } from '../../ts/errors.js';
import { createProviders } from '../../ts/llm/create-providers.js';
import type { AnswerEvent } from '../../ts/search/engine-types.js';
import { NodeSearch } from '../../ts/search/node-search.js';
import type { SearchAnswer } from '../../ts/search/results.js';
import { curieSpec, writeSearchProject } from '../helpers/search-index.js';

const root = mkdtempSync(join(tmpdir(), 'noderag-answer-stream-'));
await writeSearchProject(root, curieSpec());
const config = NodeConfig.fromMainFolder(root);
const QUESTION = 'Where was Marie Curie born?';

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

async function collect(stream: AsyncIterable<AnswerEvent<SearchAnswer>>) {
  const events: AnswerEvent<SearchAnswer>[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

describe('NodeSearch.answerStream', () => {
  it('yields the answer in deltas, then done with the result answer() gives', async () => {
    const search = new NodeSearch(config);
    try {
      const events = await collect(search.answerStream(QUESTION));
      const deltas = events.filter((e) => e.type === 'delta');
      const done = events[events.length - 1]!;
      expect(deltas.length).toBeGreaterThan(3);
      expect(done.type).toBe('done');
      if (done.type !== 'done') return;
      const plain = await search.answer(QUESTION);
      expect(deltas.map((d) => d.text).join('')).toBe(plain.response);
      expect(done.result.response).toBe(plain.response);
      expect(done.result.sources).toEqual(plain.sources);
      expect(done.result.citations).toEqual(plain.citations);
      expect(done.result.retrievalInfo).toBe(plain.retrievalInfo);
      expect(done.result.response_tokens).toBe(plain.responseTokens);
    } finally {
      search.close();
    }
  });

  it('throws a bad question from the first step; an aborted signal stops the stream', async () => {
    const search = new NodeSearch(config);
    try {
      await expect(search.answerStream('   ')[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(
        InvalidQuestionError,
      );
      const ctl = new AbortController();
      const it = search.answerStream(QUESTION, { signal: ctl.signal })[Symbol.asyncIterator]();
      expect((await it.next()).value).toMatchObject({ type: 'delta' });
      ctl.abort(new Error('client left'));
      await expect(it.next()).rejects.toThrow('client left');
    } finally {
      search.close();
    }
  });

  it('providers without stream answer in one delta', async () => {
    const own = createProviders(config, { mode: 'search' });
    const search = new NodeSearch(config, {
      providers: { run: own.run.bind(own), embedQuery: own.embedQuery.bind(own) },
    });
    try {
      const events = await collect(search.answerStream(QUESTION));
      expect(events.map((e) => e.type)).toEqual(['delta', 'done']);
      const [delta, done] = events;
      if (delta?.type !== 'delta' || done?.type !== 'done') throw new Error('unexpected events');
      expect(delta.text).toBe(done.result.response);
    } finally {
      search.close();
      own.close();
    }
  });
});
