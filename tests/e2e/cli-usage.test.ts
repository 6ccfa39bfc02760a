import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUB_COMMAND_METAS } from '../../ts/cli/metas.js';
import { runCli } from '../helpers/project.js';

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The environment without anything that would turn colours off by itself. */
function colourEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['NO_COLOR', 'FORCE_COLOR', 'TEST', 'CI', 'TERM', 'VITEST']) delete env[k];
  return env;
}

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'ts/cli/main.ts', ...args], {
    encoding: 'utf8',
    env: colourEnv(),
  });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-cli-usage-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('CLI usage errors', () => {
  it('a missing required flag is one line and exit 2, not a stack trace', () => {
    const r = cli('search');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Missing required argument: --folder');
    expect(r.stderr).not.toContain('    at ');
  });

  it('an unknown command is exit 2, with the nearest command when one is close', () => {
    const r = cli('frobnicate', '-f', '/tmp');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      'unknown command "frobnicate"; the commands are build, vis, search, ui, eval; run `noderag --help` for usage',
    );
    expect(cli('biuld', '-f', '/tmp').stderr).toContain('unknown command "biuld" (did you mean build?)');
  });

  it("flags before the command are the command's (noderag -f DIR build)", () => {
    // The same refusal as `noderag build -f <missing>`: the folder reached build.
    for (const args of [
      ['-f', join(dir, 'missing'), 'build', '--yes'],
      ['--yes', '-f', join(dir, 'missing'), 'build'],
      // Not moved past an end of options.
      ['-f', join(dir, 'missing'), 'build', '--yes', '--'],
      // A value flag of the command itself, before it: its value is not the command word.
      ['-n', '3', 'vis', '-f', join(dir, 'missing')],
      ['--workers', '2', 'search', '-f', join(dir, 'missing')],
      ['--questions', join(dir, 'q.jsonl'), 'eval', '-f', join(dir, 'missing')],
    ]) {
      const r = cli(...args);
      expect(r.status).toBe(2);
      expect(r.stderr).not.toContain('Missing required argument');
      expect(r.stderr).toContain(join(dir, 'missing'));
    }
  });

  it('an unquoted question of several words says to quote it', () => {
    for (const words of [
      ['Who', 'founded', 'it'],
      ['Halden', 'vis'],
    ]) {
      const r = cli('-f', '/tmp/nowhere', '-q', ...words);
      expect(r.status).toBe(2);
      expect(r.stderr.trim()).toBe(
        `"${words[1]}" follows the question: a question of several words goes in quotes, e.g. noderag -f DIR -q "Who founded the observatory?"`,
      );
    }
  });

  it('--version prints the package version', () => {
    for (const flag of ['--version', '-V']) {
      const r = cli(flag);
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    }
    // With something else: the something else is the problem, not --version.
    const r = cli('--version', 'extra');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('--version takes nothing else: run `noderag --version` alone');
  });

  it('a missing question is exit 2', () => {
    const r = cli('-f', '/tmp/nowhere');
    expect(r.status).toBe(2);
  });

  it('an option the command does not have is a usage error naming it, not ignored', () => {
    const r = cli('build', '-f', '/tmp/nowhere', '--rebiuld');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      'noderag build: unknown option --rebiuld (did you mean --rebuild?); run `noderag build --help` for its options',
    );
    const root = cli('-f', '/tmp/nowhere', '-q', 'x', '--retreival');
    expect(root.status).toBe(2);
    expect(root.stderr).toContain('unknown option --retreival (did you mean --retrieval?)');
    // The client's key comes from the environment: the refusal says where.
    const key = cli('-f', '/tmp/nowhere', '-q', 'x', '--api-key', 'k');
    expect(key.status).toBe(2);
    expect(key.stderr).toContain('the client sends the key in NODERAG_API_KEY');
  });

  it('an option with a value given twice is a usage error, not the last one silently', () => {
    const r = cli('-f', '/tmp/nowhere', 'build', '--folder', '/tmp/elsewhere');
    expect(r.status).toBe(2);
    // Named in the order they were typed (flags before the command stay ahead of its own).
    expect(r.stderr.trim()).toBe(
      'noderag build: -f / --folder given twice; give it once (only one value is used)',
    );
  });

  it('a --timeout longer than a timer can hold is refused, not a reply that times out at once', () => {
    const r = cli('-f', '/tmp/nowhere', '-q', 'why?', '--timeout', '3000000');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      '--timeout: expected a positive number of seconds up to 2147483, got "3000000"',
    );
    expect(r.stderr).not.toContain('TimeoutOverflowWarning');
  });
});

describe('per-command help (citty sub-command usage), without colour escapes off a terminal', () => {
  const cases: Array<[string[], string[]]> = [
    [
      ['build', '--help'],
      ['--yes', '--allow-failures', '--rebuild', '--folder'],
    ],
    [
      ['search', '--help'],
      [
        '--port',
        '--host',
        '--workers',
        '--cache-size',
        '--api-key',
        '--insecure',
        '--cors',
        '--metrics',
        '--access-log',
      ],
    ],
    [['vis', '-h'], ['-n, --nodes']],
    [['ui', '--help'], ['--port']],
    [
      ['eval', '--help'],
      ['--questions', '--json', '--set'],
    ],
    [['--help'], ['--question', '--url', '--port', 'build', 'search']],
  ];
  for (const [args, flags] of cases) {
    it(`noderag ${args.join(' ')}`, () => {
      const r = cli(...args);
      expect(r.status).toBe(0);
      for (const f of flags) expect(r.stdout).toContain(f);
      expect(r.stdout).not.toContain('\u001b[');
    });
  }

  it('the top-level usage lists every sub-command with the description its own help gives', async () => {
    const root = cli('--help');
    const bare = cli();
    expect(bare.stdout.trim()).toBe(root.stdout.trim());
    for (const [name, meta] of Object.entries(SUB_COMMAND_METAS)) {
      // The command's own definition takes the same meta, so the two cannot drift apart.
      const command = (await import(`../../ts/cli/${name}.ts`)).default as { meta: unknown };
      expect(command.meta, name).toBe(meta);
      expect(root.stdout).toMatch(new RegExp(`\\n\\s+${name}\\s+${escapeRegExp(meta.description)}`));
      expect(cli(name, '--help').stdout).toContain(`${meta.description} (noderag ${name})`);
    }
  });

  it('the build help is build’s own, not the top-level usage', () => {
    const r = cli('build', '--help');
    expect(r.stdout).toContain('USAGE noderag build');
    expect(r.stdout).not.toContain('--question');
  });

  it('a usage error carries no colour escapes either', () => {
    const r = cli('frobnicate', '-f', dir);
    expect(r.stderr).toContain('unknown command "frobnicate"');
    expect(r.stderr).not.toContain('\u001b[');
  });
});

describe('ui', () => {
  it('Ctrl-C (SIGINT) says it stops and that it stopped, and exits 0', async () => {
    const project = join(dir, 'ui-stop');
    mkdirSync(join(project, 'input'), { recursive: true });
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'ts/cli/main.ts', 'ui', '-f', project, '--port', '0'],
      {
        env: colourEnv(),
      },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    await new Promise<void>((ready) =>
      child.stdout.on('data', (d) => {
        out += d;
        if (/http:\/\/127\.0\.0\.1:\d+\//.test(out)) ready();
      }),
    );
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(err).toContain('SIGINT: stopping the UI');
    expect(err).toContain('UI stopped.');
  });
});

describe('ui --port', () => {
  it('takes 0 (any free port), and says so when the value is bad', () => {
    const r = cli('ui', '-f', dir, '--port', 'abc');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      '--port: expected an integer from 1 to 65535, or 0 for any free port, got "abc"',
    );
  });
});

describe('-f and the project folder', () => {
  it('-f with no value is an error, not the current directory', () => {
    for (const args of [
      ['build', '-f'],
      ['build', '--yes', '-f'],
      ['vis', '-f', '-n', '3'],
      ['-f', '-q', 'hi'],
    ]) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('-f/--folder needs a value');
    }
  });

  it("-q followed by one of the client's own flags has no question; a question may start with a dash", () => {
    for (const args of [
      ['-f', '/tmp/nowhere', '-q', '-r'],
      ['-f', '/tmp/nowhere', '--question', '--port', '5077'],
      ['-f', '/tmp/nowhere', '-q', '--port=5077'],
      ['-f', '/tmp/nowhere', '-q', '--no-stream', '--port', '59999'],
      ['-f', '/tmp/nowhere', '-q', '-ra'],
      ['-q', '-a', '--url', 'http://127.0.0.1:1'],
    ]) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('missing or empty -q "<question>"');
    }
    // "-5 degrees?" is a question: the client goes on and finds no server there.
    const dashed = cli('-q', '-5 degrees?', '--url', 'http://127.0.0.1:1', '--timeout', '2');
    expect(dashed.stderr).not.toContain('missing or empty -q');
    expect(dashed.status).toBe(1);
  });

  it('a stray argument of a sub-command is a usage error, not ignored', () => {
    const vis = cli('vis', '-f', '/tmp/nowhere', '5');
    expect(vis.status).toBe(2);
    expect(vis.stderr).toContain('noderag vis: unexpected argument "5" (did you mean -n 5?)');
    const build = cli('build', '-f', '/tmp/nowhere', 'y');
    expect(build.status).toBe(2);
    expect(build.stderr).toContain(
      'noderag build: unexpected argument "y". Run `noderag build --help` for usage.',
    );
  });

  it('-f given the input/ folder itself points to the project folder, and writes nothing there', () => {
    const project = join(dir, 'proj-input');
    mkdirSync(join(project, 'input'), { recursive: true });
    writeFileSync(join(project, 'input', 'a.txt'), 'Some text.');
    const input = join(project, 'input');
    for (const command of ['build', 'ui', 'search', 'vis']) {
      const r = cli(command, '-f', input, ...(command === 'ui' ? ['--port', '0'] : []));
      expect(r.status, command).toBe(2);
      expect(r.stderr).toContain(`${input} is the input/ folder of a project: -f takes the project folder`);
      expect(r.stderr).toContain(`(here -f ${project})`);
    }
    expect(readdirSync(input)).toEqual(['a.txt']);
  });

  it('the command a message suggests quotes a folder with a space, so it can be pasted', () => {
    const spaced = join(dir, 'my project');
    mkdirSync(join(spaced, 'input'), { recursive: true });
    const r = cli('search', '-f', spaced);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`run \`noderag build -f '${spaced}'\` first.`);
  });

  it('a mistyped folder is reported and never created', () => {
    const missing = join(dir, 'mistyped', 'project');
    for (const command of ['build', 'ui', 'search', 'vis']) {
      const r = cli(command, '-f', missing, ...(command === 'build' ? ['--yes'] : []));
      expect(r.status, command).toBe(2);
      expect(r.stderr).toContain(`No folder ${missing}`);
    }
    expect(existsSync(join(dir, 'mistyped'))).toBe(false);
  });

  it('build -f <a file> says so, without an ENOTDIR stack', () => {
    const file = join(dir, 'README.md');
    writeFileSync(file, '# not a project');
    const r = cli('build', '-f', file, '--yes');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${file} is a file, not a project folder`);
    expect(r.stderr).not.toContain('ENOTDIR');
    expect(r.stderr).not.toContain('    at ');
  });

  it('vis and the -q client print the config warnings too (a misspelt section takes the defaults)', () => {
    const project = join(dir, 'misspelt');
    mkdirSync(join(project, 'input'), { recursive: true });
    writeFileSync(join(project, 'Node_config.yaml'), 'Config:\n  port: 5731\n');
    const warning = 'Warning: Config: unknown section, ignored (did you mean config?)';
    const vis = cli('vis', '-f', project);
    expect(vis.status).toBe(1); // nothing built
    expect(vis.stderr).toContain(warning);
    const client = cli('-f', project, '-q', 'Who?', '--port', '9');
    expect(client.status).toBe(1); // no server
    expect(client.stderr).toContain(warning);
  });

  it('build writes the config only into a folder that has input/', () => {
    const bare = join(dir, 'bare');
    mkdirSync(bare);
    const refused = cli('build', '-f', bare, '--yes');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('has neither Node_config.yaml nor an input/ folder');
    expect(readdirSync(bare)).toEqual([]);
    mkdirSync(join(bare, 'input'));
    const created = cli('build', '-f', bare, '--yes');
    expect(created.status).toBe(3);
    expect(existsSync(join(bare, 'Node_config.yaml'))).toBe(true);
  });
});

describe('Node_config.yaml that is not valid YAML', () => {
  it('an alias bomb is the invalid-config message and exit 2, not a stack trace', () => {
    const project = join(dir, 'bomb');
    mkdirSync(join(project, 'input'), { recursive: true });
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [name, prev] of [
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
      ['e', 'd'],
      ['f', 'e'],
      ['g', 'f'],
    ]) {
      lines.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    writeFileSync(join(project, 'Node_config.yaml'), `${lines.join('\n')}\n`);
    for (const command of [
      ['build', '-f', project, '--yes'],
      ['vis', '-f', project],
      ['search', '-f', project],
    ]) {
      const r = cli(...command);
      expect(r.status, command[0]).toBe(2);
      expect(r.stderr).toContain(`${join(project, 'Node_config.yaml')} is not valid YAML`);
      expect(r.stderr).toContain('aliases expand to too many nodes at line 2');
      expect(r.stderr).not.toContain('    at ');
    }
  });
});

describe('the -q client reaches a server on another port', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        const { question } = JSON.parse(body) as { question: string };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ answer: `${req.url} ${question}` }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('--port overrides config.port; --url takes http://host:port; -f may then be left out', async () => {
    const project = join(dir, 'client');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'Node_config.yaml'), 'config:\n  port: 1\n');
    const viaPort = await runCli(['-f', project, '-q', 'one', '--port', String(port)]);
    expect(viaPort.stderr).toBe('');
    expect(viaPort.stdout.trim()).toBe('/answer one');
    const viaUrl = await runCli(['-q', 'two', '--url', `http://127.0.0.1:${port}`]);
    expect(viaUrl.stdout.trim()).toBe('/answer two');
    const conflicting = await runCli(['-q', 'x', '--url', `http://127.0.0.1:${port}`, '--port', '1']);
    expect(conflicting.code).toBe(2);
    expect(conflicting.stderr).toContain(`--url says port ${port} but --port says 1`);
  });
});
