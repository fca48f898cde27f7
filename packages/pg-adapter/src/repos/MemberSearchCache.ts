/**
 * Name searches' results kept in this process: per chamber, order and text, the ids of every
 * matching member in order, and the chamber's members version they were read at (migration
 * 0011: it moves with every write that adds, removes, renames, re-dates or moves a member). A
 * page of the same search is then the slice of those ids, read as 100 members by id, whatever
 * the number of matches, for as long as the version has not moved. A search is kept from its
 * second read on (the first only marks it `SEEN`), so one asked once costs no more than without
 * keeping. Bounded: a search of more than MAX_IDS matches keeps no ids (`MANY`), and the least
 * recently read go first past MAX_KEPT ids in all.
 */

export const MAX_IDS = 10_000
const MAX_KEPT = 500_000

export interface KeptSearch {
  readonly version: string
  readonly ids: ReadonlyArray<number>
}

/** A search read once: the next read keeps its ids. */
export const SEEN = "seen"
/** A search with more matches than are kept when last counted: read from its matches every time. */
export const MANY = "many"

type Entry = KeptSearch | typeof SEEN | typeof MANY

export interface MemberSearchCache {
  readonly get: (key: string) => Entry | undefined
  readonly set: (key: string, entry: Entry) => void
  readonly forget: (key: string) => void
}

const weight = (entry: Entry) => (typeof entry === "string" ? 1 : entry.ids.length)

export const memberSearchCache = (): MemberSearchCache => {
  const entries = new Map<string, Entry>()
  let kept = 0
  const forget = (key: string) => {
    const entry = entries.get(key)
    if (entry === undefined) return
    entries.delete(key)
    kept -= weight(entry)
  }
  return {
    get: (key) => {
      const entry = entries.get(key)
      if (entry !== undefined) {
        // The most recently read last: the first entry is the one to drop.
        entries.delete(key)
        entries.set(key, entry)
      }
      return entry
    },
    set: (key, entry) => {
      forget(key)
      if (weight(entry) > MAX_IDS) return
      for (const oldest of entries.keys()) {
        if (kept + weight(entry) <= MAX_KEPT) break
        forget(oldest)
      }
      entries.set(key, entry)
      kept += weight(entry)
    },
    forget
  }
}
