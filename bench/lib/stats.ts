/** Small statistics and formatting helpers shared by the benchmarks. */

/** The p-th percentile (0–100) by nearest rank of an unsorted sample; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((s, v) => s + v, 0) / values.length;
}

/** A markdown table (the format RESULTS.md uses). Numeric-looking cells are right-aligned. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const numeric = header.map(
    (_, c) => rows.length > 0 && rows.every((r) => /^[-+]?[\d.,]+(e[-+]?\d+)?%?$|^nan$/i.test(String(r[c]))),
  );
  const lines = [
    `| ${header.join(' | ')} |`,
    `|${numeric.map((n) => (n ? '---:' : '---')).join('|')}|`,
    ...rows.map((r) => `| ${r.map(String).join(' | ')} |`),
  ];
  return lines.join('\n');
}

/** Fixed decimals, `nan` for a missing value. */
export function fmt(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'nan';
}

export function mib(bytes: number): string {
  return fmt(bytes / (1024 * 1024), 1);
}
