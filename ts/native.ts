/**
 * The ONLY module that loads the napi-rs addon. Everything else imports `native` from
 * here, so the boundary has one door: errors thrown by the addon are rewritten here into
 * the classes of ./errors.ts.
 *
 * Native errors arrive as `Error("<CODE>: <message>")` (see bindings/src/error.rs);
 * `translateNativeError` turns the prefix into `error.code` and picks the class.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Addon from '../bindings/index.js';
import {
  ClosedError,
  IndexFileError,
  InternalError,
  InvalidArgumentError,
  type NodeRagError,
} from './errors.js';

export type NativeAddon = typeof Addon;

function platformSuffix(): string {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    const libc = report?.header?.glibcVersionRuntime ? 'gnu' : 'musl';
    return `${platform}-${arch}-${libc}`;
  }
  if (platform === 'win32') return `${platform}-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** The package root (holds package.json): from ts/ (tsx, vitest) and from dist/ (compiled). */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bindings'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('noderag: cannot locate the root of the noderag package (package.json beside bindings/)');
}

/**
 * Loads, in this order: the prebuilt addon of the installed platform package
 * (`noderag-linux-x64-gnu` etc., an optional dependency of the published package; see
 * scripts/pack-prebuilt.mjs), then the addon built from source into bindings/ (the install
 * script's fallback, and always the case in a clone of the repository).
 */
function loadAddon(): NativeAddon {
  const suffix = platformSuffix();
  const root = findPackageRoot();
  const require = createRequire(join(root, 'package.json'));
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string })
    .version;
  const prebuiltPackage = `noderag-${suffix}`;
  let skipped = `${prebuiltPackage} is not installed`;
  let manifest: string | undefined;
  try {
    manifest = require.resolve(`${prebuiltPackage}/package.json`);
  } catch {
    manifest = undefined;
  }
  if (manifest !== undefined) {
    const found = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    const file = join(dirname(manifest), `noderag.${suffix}.node`);
    if (found !== version) skipped = `${prebuiltPackage} is version ${found}, noderag ${version}`;
    else if (!existsSync(file)) skipped = `${prebuiltPackage} has no noderag.${suffix}.node`;
    else return require(file) as NativeAddon;
  }
  const local = join(root, 'bindings', `noderag.${suffix}.node`);
  if (!existsSync(local)) {
    throw new Error(
      `noderag: no native addon for ${suffix}: ${skipped}, and none was built from source at ${local}. Install ${prebuiltPackage}, or run \`npm run build:native\` in the noderag package (needs Rust's cargo).`,
    );
  }
  return require(local) as NativeAddon;
}

let addon: NativeAddon | undefined;

function loaded(): NativeAddon {
  if (addon === undefined) addon = loadAddon();
  return addon;
}

/**
 * The raw addon. Prefer the wrapper classes (ts/vector/, ts/store/, …) over calling it directly.
 * Loaded on first use, so that importing a module that can call it (the config, the CLI's
 * usage, the unit tests) does not need the native build.
 */
export const native: NativeAddon = new Proxy({} as NativeAddon, {
  get: (_target, key) => Reflect.get(loaded(), key),
  has: (_target, key) => key in loaded(),
});

/**
 * Stable native error codes (bindings/src/error.rs `codes`). tests/native/error-codes.test.ts
 * compares them with the addon's `nativeErrorCodes()`.
 */
export const NATIVE_CODES = {
  INVALID_ARGUMENT: 'NATIVE_INVALID_ARGUMENT',
  IO: 'NATIVE_IO',
  CORRUPT_FILE: 'NATIVE_CORRUPT_FILE',
  DIMENSION_MISMATCH: 'NATIVE_DIMENSION_MISMATCH',
  CLOSED: 'NATIVE_CLOSED',
  PANIC: 'NATIVE_PANIC',
  INTERNAL: 'NATIVE_INTERNAL',
} as const;

const CODE_PREFIX = /^(NATIVE_[A-Z_]+): ([\s\S]*)$/;

/** Rewrites an error thrown by the addon into a NodeRagError subclass; other values pass through. */
function translateNativeError(e: unknown): unknown {
  if (!(e instanceof Error)) return e;
  const m = CODE_PREFIX.exec(e.message);
  if (!m) return e;
  const code = m[1]!;
  const message = m[2]!;
  let out: NodeRagError;
  switch (code) {
    case NATIVE_CODES.INVALID_ARGUMENT:
      out = new InvalidArgumentError(code, message, { cause: e });
      break;
    case NATIVE_CODES.IO:
    case NATIVE_CODES.CORRUPT_FILE:
    case NATIVE_CODES.DIMENSION_MISMATCH:
      out = new IndexFileError(code, message, { cause: e });
      break;
    case NATIVE_CODES.CLOSED:
      out = new ClosedError(code, message, { cause: e });
      break;
    default:
      out = new InternalError(code, message, { cause: e });
  }
  return out;
}

/** Calls `fn`, translating a native error. Use around every sync addon call. */
export function callNative<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw translateNativeError(e);
  }
}

/** Awaits an async addon call, translating a native error. */
export async function callNativeAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw translateNativeError(e);
  }
}
