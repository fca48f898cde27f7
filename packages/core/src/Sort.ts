/** `sort` query values: a column name, `-` for descending; anything unknown means the default. */
export interface SortOrder<C extends string> {
  readonly column: C
  readonly descending: boolean
}

export const parseSort = <C extends string>(
  value: string | undefined,
  columns: ReadonlyArray<C>
): SortOrder<C> | undefined => {
  if (value === undefined) return undefined
  const descending = value.startsWith("-")
  const column = (descending ? value.slice(1) : value) as C
  return columns.includes(column) ? { column, descending } : undefined
}
