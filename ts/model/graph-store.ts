/**
 * The base graph (docs/method.md §1) as the pipeline edits it: typed, weighted nodes and
 * weighted undirected edges keyed by the ordered pair. Integer weights at rest.
 * Iteration order is made deterministic by the writers (sorted by id), not by insertion.
 */
import type { GraphEdge, GraphNode, NodeType } from './types.js';

export function edgeKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

/**
 * A Map that can record, from `track()` on, the value each key had before its first change:
 * a copy of the row, or null when the key was absent. `set` and `delete` record by
 * themselves; an edit of a value in place must call `note(key)` first (BaseGraph's methods
 * do). What changed since `track()` is then read from the recorded keys alone
 * (`changedRows`), instead of comparing every row with a copy of them all.
 */
export class TrackedMap<V extends object> extends Map<string, V> {
  /**
   * Key → its value when tracking started (a copy), or null when absent; null when not
   * tracking (undefined while Map's constructor runs: not a private field for that reason).
   */
  private before: Map<string, V | null> | null | undefined = null;

  /** Starts (or restarts) recording: the current rows become the base. */
  track(): void {
    this.before = new Map();
  }

  /** Stops recording (the base is unknown until the next `track()`). */
  untrack(): void {
    this.before = null;
  }

  get tracking(): boolean {
    return Boolean(this.before);
  }

  /** Records `key`'s current value as its base value, if this is its first change since `track()`. */
  note(key: string): void {
    const before = this.before;
    if (!before || before.has(key)) return;
    const v = super.get(key);
    before.set(key, v === undefined ? null : { ...v });
  }

  /** `set` without recording (rows read from the committed tables before tracking starts). */
  load(key: string, value: V): void {
    super.set(key, value);
  }

  override set(key: string, value: V): this {
    if (this.before) this.note(key);
    return super.set(key, value);
  }

  override delete(key: string): boolean {
    if (this.before && this.has(key)) this.note(key);
    return super.delete(key);
  }

  override clear(): void {
    if (this.before) for (const key of this.keys()) this.note(key);
    super.clear();
  }

  /** Keys changed since `track()`, each with its base value (null: absent then). */
  changedRows(): ReadonlyMap<string, V | null> {
    if (!this.before) throw new Error('TrackedMap.changedRows: not tracking');
    return this.before;
  }
}

export class BaseGraph {
  readonly nodes = new TrackedMap<GraphNode>();
  readonly edges = new TrackedMap<GraphEdge>();

  /** Records every later change against the current rows (`nodes.changedRows()`, `edges.changedRows()`). */
  trackChanges(): void {
    this.nodes.track();
    this.edges.track();
  }

  /** A node to edit in place (its base value recorded first), or undefined. */
  editNode(id: string): GraphNode | undefined {
    this.nodes.note(id);
    return this.nodes.get(id);
  }

  /** An edge to edit in place (its base value recorded first), or undefined. */
  editEdge(key: string): GraphEdge | undefined {
    this.edges.note(key);
    return this.edges.get(key);
  }

  hasNode(id: string): boolean {
    return this.nodes.has(id);
  }

  /** Adds a node with `weight` or, if present, adds `weight` to it; marks it touched in `g`. */
  bumpNode(id: string, type: NodeType, g: number, weight = 1): GraphNode {
    const n = this.nodes.get(id);
    if (n) {
      if (n.type !== type) throw new Error(`node ${id} is a ${n.type}, not a ${type}`);
      this.nodes.note(id);
      n.weight += weight;
      n.updatedGeneration = g;
      return n;
    }
    const created: GraphNode = { type, weight, generation: g, updatedGeneration: g };
    this.nodes.set(id, created);
    return created;
  }

  /** Marks a node as changed in generation `g` without changing its weight. */
  touch(id: string, g: number): void {
    const n = this.nodes.get(id);
    if (n && n.updatedGeneration !== g) {
      this.nodes.note(id);
      n.updatedGeneration = g;
    }
  }

  /** Adds `weight` to the undirected edge a—b, creating it if absent. Self-loops are refused. */
  bumpEdge(a: string, b: string, g: number, weight = 1): void {
    if (a === b) throw new Error(`refusing a self-loop on ${a}`);
    const key = edgeKey(a, b);
    const e = this.edges.get(key);
    if (e) {
      this.edges.note(key);
      e.weight += weight;
      return;
    }
    const [source, target] = a < b ? [a, b] : [b, a];
    this.edges.set(key, { source, target, weight, generation: g });
  }

  /** Creates the edge with `weight` if absent; an existing edge is left as it is ("never incremented"). */
  ensureEdge(a: string, b: string, g: number, weight = 1): boolean {
    const key = edgeKey(a, b);
    if (this.edges.has(key)) return false;
    this.bumpEdge(a, b, g, weight);
    return true;
  }

  hasEdge(a: string, b: string): boolean {
    return this.edges.has(edgeKey(a, b));
  }
}
