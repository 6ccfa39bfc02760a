/**
 * Setup file of the `unit` vitest project (vitest.config.ts): unit tests run without the
 * native addon, so `npm run test:unit` needs no Rust build. `ts/native.ts` loads the addon
 * on first use; a unit test that gets that far fails here, saying where it belongs.
 */
import Module from 'node:module';

const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = loader._load;
loader._load = function (this: unknown, request: string, ...rest: unknown[]) {
  if (request.endsWith('.node')) {
    throw new Error(
      `unit tests run without native code, but this one loads ${request}: a test that needs the addon belongs in tests/native/`,
    );
  }
  return load.call(this, request, ...rest);
};
