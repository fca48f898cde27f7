/** Row helpers shared by the repositories: timestamps to ISO strings, counts to numbers. */
export const iso = (value: unknown): string | null =>
  value === null || value === undefined ? null : value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString()

export const isoRequired = (value: unknown): string => iso(value)!

export const num = (value: unknown): number => (typeof value === "number" ? value : Number(value))

export const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : num(value))

/** Escapes LIKE wildcards so user text matches literally. */
export const likeEscape = (text: string) => text.replace(/[\\%_]/g, "\\$&")
