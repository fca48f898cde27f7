/**
 * Whether a write changed a resource's API representation (ruling 34): an `<resource>.updated`
 * event fires only then. `updated_at` moves with every write and is not counted; a field stored
 * but never shown (an event's description, a hidden custom field) changes nothing shown.
 */
export interface Shown {
  readonly attributes: unknown
}

/** Both come from the same repository read, so their attributes are built in one key order. */
export const changesShown = (before: Shown, after: Shown): boolean => JSON.stringify(before.attributes) !== JSON.stringify(after.attributes)
