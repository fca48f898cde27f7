/** `sort` query values: a column name, `-` for descending; anything unknown means the default. */
export interface SortOrder<C extends string> {
  readonly column: C
  readonly descending: boolean
}

/** The column every list whose items carry `updated_at` also sorts by, ties by id (ruling 30). */
export const UPDATED_AT = "updated_at"

/** A list's sort columns: its own, then `updated_at`. */
export const sortColumns = <const C extends ReadonlyArray<string>>(...columns: C): readonly [...C, typeof UPDATED_AT] => [...columns, UPDATED_AT]

export const parseSort = <C extends string>(
  value: string | undefined,
  columns: ReadonlyArray<C>
): SortOrder<C> | undefined => {
  if (value === undefined) return undefined
  const descending = value.startsWith("-")
  const column = (descending ? value.slice(1) : value) as C
  return columns.includes(column) ? { column, descending } : undefined
}
