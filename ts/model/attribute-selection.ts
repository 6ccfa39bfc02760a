/**
 * Which important entities the Attribute pipeline asks the model about (docs/method.md §3.5,
 * §4.5), as a pure decision over what the index recorded, so every rule is testable without
 * the graph algorithms that judge importance.
 */

/** What the index holds about one important entity. */
export interface AttributeCase {
  /** It has an attribute. */
  hasAttribute: boolean;
  /** The input its attribute was written from (attribute_inputs.json `inputs`). */
  recordedInput: string | undefined;
  /** The input of its attribute a sync retired in this cycle (`retired`). */
  retiredInput: string | undefined;
  /** The input it was last judged not important with (`unimportant`). */
  unimportantInput: string | undefined;
  /** g ≥ 2. */
  incremental: boolean;
  /** Its support changed in this cycle (`updated_generation = g`). */
  touched: boolean;
  /** A unit, relationship or other neighbour of it changed in this cycle. */
  neighbourhoodTouched: boolean;
  /** Its recorded input was hashed with the chat model of this cycle. */
  sameModel: boolean;
}

/**
 * keep: its attribute stays; restore: the retired attribute comes back; leave: no attribute
 * for now (its importance is not judged again); ask: one call.
 */
export type AttributeAction = 'keep' | 'restore' | 'leave' | 'ask';

/** `input` computes the entity's prompt input hash; called only when the rules need it. */
export function attributeAction(c: AttributeCase, input: () => string): AttributeAction {
  // An attribute of an older index (no recorded input): regenerated when its entity changed.
  if (c.hasAttribute && c.recordedInput === undefined && !c.touched) return 'keep';
  // In an incremental cycle an entity's importance is judged again only when its support
  // changed: a change elsewhere in the graph moves the sampled betweenness of borderline
  // entities in or out, noise that would cost a call each (with pivots drawn by position,
  // a new sample at each change, 123 entities on the update benchmark's sync; with pivots
  // chosen by id, docs/method.md §3.5, 4).
  if (!c.hasAttribute && c.incremental && !c.touched) return 'leave';
  // Its input is its name and the texts, weights and edge weights of its neighbours: when
  // neither it nor a neighbour changed (each change marks the node with g), under the same
  // model, the input is the recorded one, and hashing it again would only confirm that (402
  // prompts made for 163 such keeps on the update benchmark's sync; 1,894 on the 10 MB one).
  if (c.hasAttribute && c.incremental && !c.touched && !c.neighbourhoodTouched && c.sameModel) return 'keep';
  const hash = input();
  // Nor when it was judged not important before with this very input: its support changed
  // (an edited file's entities leave with the old chunk and come back with the new one) but
  // not its material, so its importance moved with the graph around it, and the attribute
  // would say nothing new (22 of the sync's 199 Attribute calls on the update benchmark
  // before this rule).
  if (!c.hasAttribute && c.incremental && c.unimportantInput === hash) return 'leave';
  if (c.hasAttribute && c.recordedInput === hash) return 'keep';
  if (!c.hasAttribute && c.retiredInput === hash) return 'restore';
  return 'ask';
}
