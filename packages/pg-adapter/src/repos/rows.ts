/** Row helpers shared by the repositories. */

/** A timestamp column (the driver gives a Date) as ISO 8601. */
export const iso = (value: Date | null): string | null => (value === null ? null : value.toISOString())

/** Escapes LIKE wildcards so user text matches literally. */
export const likeEscape = (text: string) => text.replace(/[\\%_]/g, "\\$&")

/** An `id` or count column: int8 arrives as a bigint. */
export type Int8 = bigint | number
