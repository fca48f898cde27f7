/** A timestamp column as the API shows times (ISO 8601, UTC, milliseconds), formatted by the database. */
export const isoColumn = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
