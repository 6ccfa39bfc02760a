/**
 * Prompt material for attributes (docs/method.md §3.5) and communities (§3.7): items ranked by
 * importance, then kept greedily while their tokens still fit the budget (an item that does
 * not fit is skipped; later, shorter ones may still fit). Deterministic.
 */
export interface MaterialItem {
  id: string;
  text: string;
  /** Primary rank key, descending (edge weight; degree inside the community). */
  primary: number;
  /** Secondary rank key, descending (node weight). */
  secondary: number;
}

export function rankMaterial<T extends MaterialItem>(items: readonly T[]): T[] {
  return [...items].sort(
    (a, b) => b.primary - a.primary || b.secondary - a.secondary || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** Keeps ranked items while the running token total stays within `budget`. */
export function trimToBudget<T extends MaterialItem>(
  ranked: readonly T[],
  budget: number,
  countTokens: (texts: string[]) => ArrayLike<number>,
  alreadyUsed = 0,
): T[] {
  const counts = countTokens(ranked.map((i) => i.text));
  const kept: T[] = [];
  let used = alreadyUsed;
  ranked.forEach((item, i) => {
    const n = counts[i] ?? 0;
    if (used + n <= budget) {
      kept.push(item);
      used += n;
    }
  });
  return kept;
}
