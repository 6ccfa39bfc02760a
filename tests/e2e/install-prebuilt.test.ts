/**
 * Install without Rust (issue 17 item 4): the published shape of the package, tried as a user
 * on a machine without cargo would. The platform package (noderag-linux-x64-gnu etc., holding
 * the release addon `npm ci` built) and the main package (compiled TypeScript, the platform
 * packages in its optionalDependencies) are packed with `npm pack`
 * (scripts/pack-prebuilt.mjs), installed into an empty project with no cargo on PATH and no
 * network (`npm ci --offline` from the npm cache that the repository's `npm ci` filled), and
 * the installed CLI builds the example and the installed library answers a question. The steps
 * are tests/helpers/prebuilt.ts (bench/install.ts times the same ones).
 *
 * When the npm cache lacks one of the dependencies' tarballs (a CI that ran `npm ci` with
 * another cache), the tests skip and say which tarball is missing: they must not download it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { output, type Packed, PrebuiltSandbox } from '../helpers/prebuilt.js';

let sandbox: PrebuiltSandbox;
let packed: Packed;
let skipReason: string | null = null;

beforeAll(() => {
  sandbox = PrebuiltSandbox.create();
  skipReason = sandbox.missing;
  if (skipReason !== null) {
    console.warn(`tests/e2e/install-prebuilt.test.ts skipped: ${skipReason}`);
    return;
  }
  packed = sandbox.pack();
}, 600_000);

afterAll(() => {
  sandbox?.remove();
});

describe('installing the packed packages without Rust', () => {
  it('the sandboxed PATH has no cargo', (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const r = spawnSync('cargo', ['--version'], { env: sandbox.env, encoding: 'utf8' });
    expect(r.error?.message ?? `cargo ran: ${r.stdout}`).toMatch(/ENOENT/);
  });

  it('installs the prebuilt addon without compiling, then builds the example and answers', (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const { name, version } = sandbox.main;
    const project = sandbox.consumer('with-prebuilt');
    const install = sandbox.install(project);
    expect(install.status, output(install)).toBe(0);
    expect(install.stdout).toContain(
      `noderag: using the prebuilt native addon from ${packed.platformName}@${version} (nothing to compile).`,
    );
    const installed = join(project, 'node_modules', name);
    // Nothing was compiled: no addon in bindings/, no cargo target folder.
    expect(readdirSync(join(installed, 'bindings')).filter((f) => f.endsWith('.node'))).toEqual([]);
    expect(existsSync(join(installed, 'target'))).toBe(false);
    expect(
      existsSync(join(project, 'node_modules', packed.platformName, `noderag.${packed.platformSuffix}.node`)),
    ).toBe(true);

    const build = sandbox.buildExample(project);
    expect(build.status, output(build)).toBe(0);
    expect(build.stdout).toMatch(/Build finished in [\d.]+ s \(generation 1\)/);

    const asked = sandbox.askExample(project);
    expect(asked.status, output(asked)).toBe(0);
    const answer = JSON.parse(asked.stdout.trim().split('\n').at(-1)!) as {
      response: string;
      responseTokens: number;
      retrieval: string;
    };
    expect(answer.retrieval).toContain('discovered on 14 March 1925 by Edith Pryce');
    expect(answer.retrieval).toContain('Pryce Reflector');
    expect(answer.response).toContain('Comet Pryce');
    expect(answer.responseTokens).toBeGreaterThan(0);
  }, 600_000);

  it('with no matching prebuilt addon and no cargo, the install fails naming both', (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const project = sandbox.consumer('without-prebuilt');
    // --omit=optional: what npm does on a platform no platform package matches.
    const install = sandbox.install(project, ['--omit=optional']);
    expect(install.status, output(install)).not.toBe(0);
    expect(install.stderr).toContain(
      `noderag: no prebuilt native addon matches this platform (${packed.platformSuffix}: the optional package ${packed.platformName} is not installed), and building one from source needs Rust's cargo on PATH, which was not found.`,
    );
    expect(existsSync(join(project, 'node_modules', packed.platformName))).toBe(false);
  }, 300_000);
});
