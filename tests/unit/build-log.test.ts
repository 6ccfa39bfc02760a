import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BuildLog, formatLogLine, formatSeconds, secretRedactor } from '../../ts/indexing/log.js';

describe('info.log', () => {
  it('appends `<ISO-8601 UTC> <LEVEL> <message>` lines, one per event', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'noderag-log-'));
    try {
      const path = join(dir, 'info', 'info.log');
      let t = Date.parse('2025-01-01T12:00:00Z');
      const now = () => {
        t += 1000;
        return new Date(t);
      };
      const log = new BuildLog(path, { now, redact: secretRedactor(['my-secret-key-123']) });
      log.info('Build started');
      log.warn('reports/q3.pdf skipped: encrypted PDF');
      log.error('openai failed: key my-secret-key-123 rejected\nsecond line');
      const second = new BuildLog(path, { now });
      second.info('appended by a later run');
      expect((await readFile(path, 'utf8')).split('\n')).toEqual([
        '2025-01-01T12:00:01.000Z INFO Build started',
        '2025-01-01T12:00:02.000Z WARN reports/q3.pdf skipped: encrypted PDF',
        '2025-01-01T12:00:03.000Z ERROR openai failed: key [REDACTED] rejected\\nsecond line',
        '2025-01-01T12:00:04.000Z INFO appended by a later run',
        '',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('times a stage and lists its counts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'noderag-log-'));
    try {
      const log = new BuildLog(join(dir, 'info.log'));
      const finish = log.stage('Text pipeline');
      const ms = finish({ items: 12, calls: 3, cacheHits: 9 });
      expect(ms).toBeGreaterThanOrEqual(0);
      const lines = (await readFile(join(dir, 'info.log'), 'utf8')).trim().split('\n');
      expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO Text pipeline started$/);
      expect(lines[1]).toMatch(
        / INFO Text pipeline finished in \d+\.\d s \(items=12, calls=3, cache hits=9\)$/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('redacts configured secrets and key-shaped strings; leaves short values alone', () => {
    const redact = secretRedactor([
      'abc',
      null,
      undefined,
      'sk-configured-but-odd',
      'sk-configured-but-odd-longer',
    ]);
    expect(redact('abc stays; sk-configured-but-odd-longer and sk-configured-but-odd go')).toBe(
      'abc stays; [REDACTED] and [REDACTED] go',
    );
    expect(redact('Authorization: Bearer eyJhbGciOi.J9x')).toBe('Authorization: Bearer [REDACTED]');
    expect(redact('GET /v1/models?key=AIzaSyA-abcdefghijklmnopqrstuvwxyz012345&x=1')).toBe(
      'GET /v1/models?key=[REDACTED]&x=1',
    );
    expect(redact('key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX leaked')).toBe('key [REDACTED] leaked');
    expect(redact('AIzaSyA-abcdefghijklmnopqrstuvwxyz012345')).toBe('[REDACTED]');
  });

  it('formats lines and durations', () => {
    expect(formatLogLine(new Date('2025-01-01T00:00:00Z'), 'WARN', 'a\tb\u0007c')).toBe(
      '2025-01-01T00:00:00.000Z WARN a\tb\\u0007c',
    );
    expect(formatSeconds(12_449)).toBe('12.4 s');
    expect(formatSeconds(60)).toBe('0.1 s');
  });
});
