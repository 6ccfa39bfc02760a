/**
 * Fake OpenAI- and Gemini-compatible servers for tests and benchmarks (real SDKs, real HTTP
 * on 127.0.0.1, answers from the local provider, injectable faults, a request log).
 */
export { FakeGeminiServer, startFakeGemini } from './fake-gemini.js';
export { type FakeOpenAIOptions, FakeOpenAIServer, startFakeOpenAI } from './fake-openai.js';
export type { FakeServerOptions, Fault, FaultRule, LoggedRequest } from './fake-server.js';
export { ManualClock, settle } from './manual-clock.js';
export { recognizePrompt } from './prompt-inputs.js';
