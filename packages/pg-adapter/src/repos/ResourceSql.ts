/**
 * SQL derived from a resource's one declaration (core `defineResource`): the column list a
 * read selects, the values a write stores, and the mapping of a row to the API's envelope.
 * A resource's table has one column per attribute, named as the API names it, plus `id`,
 * `tenant_id`, `created_at` and `updated_at`.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import type { Fields, Locked, Resource, StoredStruct } from "@chamber/core"
import { isoColumn } from "./IsoColumn.ts"
import { andShownRow, shownRow } from "./HeldRows.ts"
import { type Columns, listPage, type Order } from "./PageSql.ts"

/** A name written into a statement as it is (a table, a column): a plain lower-case identifier. */
export const IDENTIFIER = /^[a-z][a-z0-9_]*$/

/** The custom field values the tenant marked API-visible, as one jsonb object; `sliced`: by definitions no import holds (HeldRows.ts). */
const visibleCustomFields = (alias: string, resource: string, sliced: boolean) =>
  `(SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
     FROM jsonb_each(${alias}.custom_fields) e
     JOIN custom_field_definitions d
       ON d.tenant_id = ${alias}.tenant_id AND d.resource = '${resource}' AND d.api_visible AND d.key = e.key${andShownRow(sliced, "d")})`

/**
 * The select list of a resource read through `alias`: `id`, every attribute, and the two
 * timestamps. `stored` reads custom fields whole (hidden ones too), for change detection.
 */
export const selectList = <D extends Fields>(
  resource: Resource<string, D>,
  alias: string,
  options?: { readonly stored?: boolean; readonly sliced?: boolean }
) => {
  // Columns are named as the fields are, and written into the statement as they are.
  const bad = resource.storedKeys.find((key) => !IDENTIFIER.test(key))
  if (bad !== undefined) throw new Error(`${resource.name} field ${JSON.stringify(bad)} is not a plain identifier`)
  return [
    `${alias}.id`,
    ...(options?.stored === true ? resource.storedKeys : resource.keys).map((key) => {
      const column = resource.fields[key]!.kind.column
      if (column === "date") return `${alias}.${key}::text AS ${key}`
      if (column === "timestamp") return `${isoColumn(`${alias}.${key}`)} AS ${key}`
      // int8 arrives as a bigint; as float8 it is a number, exact up to 2^53.
      if (column === "int8") return `${alias}.${key}::float8 AS ${key}`
      if (typeof column === "object" && options?.stored !== true) return `${visibleCustomFields(alias, column.customFields, options?.sliced === true)} AS ${key}`
      return `${alias}.${key}`
    }),
    `${isoColumn(`${alias}.created_at`)} AS created_at`,
    `${isoColumn(`${alias}.updated_at`)} AS updated_at`
  ].join(",\n  ")
}

/** A row as the select list reads it (the stored one: write-only fields too). */
export type ResourceRow<D extends Fields> = StoredStruct<D>["Type"] & {
  readonly id: bigint | number
  readonly created_at: string | null
  readonly updated_at: string | null
}

/** Each of `keys`, null: what every copy starts from, so that each has every declared key in the declaration's order. */
const emptyOf = (keys: ReadonlyArray<string>): Record<string, unknown> => Object.fromEntries(keys.map((key) => [key, null]))

/** A copy of `keys` of a row, in the declaration's order. */
const picker = <A>(keys: ReadonlyArray<string>) => {
  const empty = emptyOf(keys)
  return (row: object): A => {
    const out = { ...empty }
    for (const key of keys) out[key] = (row as Record<string, unknown>)[key]
    return out as A
  }
}

/** The attributes of a row. */
export const toAttributes = <D extends Fields>(resource: Resource<string, D>) =>
  picker<Resource<string, D>["Attributes"]["Type"]>(resource.keys)

/** The envelope `{id, attributes, created_at, updated_at}` of a row. */
export const toEnvelope = <D extends Fields>(resource: Resource<string, D>) => {
  const attributesOf = toAttributes(resource)
  return (row: ResourceRow<D>): Resource<string, D>["Envelope"]["Type"] => ({
    id: Number(row.id),
    attributes: attributesOf(row),
    created_at: row.created_at,
    updated_at: row.updated_at
  })
}

/**
 * The envelope columns of a resource read through `alias`, its values read out of rows read as
 * arrays (`statement.values`): the id, then each attribute in the declaration's order, then the
 * two timestamps.
 */
export const envelopeColumns = <D extends Fields>(
  resource: Resource<string, D>,
  alias: string,
  sliced = false
): Columns<Resource<string, D>["Envelope"]["Type"]> => {
  type Envelope = Resource<string, D>["Envelope"]["Type"]
  const keys = resource.keys
  const n = keys.length
  const empty = emptyOf(keys)
  return {
    select: selectList(resource, alias, { sliced }),
    at: (offset) => (v): Envelope => {
      const attributes = { ...empty }
      for (let i = 0; i < n; i++) attributes[keys[i]!] = v[offset + 1 + i]
      return {
        id: Number(v[offset]),
        attributes,
        created_at: v[offset + n + 1],
        updated_at: v[offset + n + 2]
      } as Envelope
    }
  }
}

/** Column values for an insert or update: `jsonb` columns are sent as JSON text. */
export const columnValues = <D extends Fields>(resource: Resource<string, D>, values: Partial<Record<keyof D, unknown>>) => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(values)) {
    const field = resource.fields[key]
    if (field === undefined || value === undefined) continue
    const column = field.kind.column
    out[key] = column === "json" || typeof column === "object" ? (value === null ? null : JSON.stringify(value)) : value
  }
  return out
}

/** Ids as the text of an int8 array, one parameter for `= ANY($1::int8[])`. */
export const int8Array = (ids: ReadonlyArray<number>) => `{${ids.join(",")}}`

/**
 * The statements every resource's repository has, over its table (`members m`): find one, find
 * one locked with every stored field, insert, update, and a page. A repository adds only what
 * is its own (filters, slugs, subscriptions). `sliced` (HeldRows.ts `ImportSlices`): reads and
 * updates pass over rows an import holds.
 */
export const resourceTable = <D extends Fields>(
  sql: SqlClient.SqlClient,
  resource: Resource<string, D>,
  table: string,
  alias: string,
  sliced: boolean
) => {
  type Envelope = Resource<string, D>["Envelope"]["Type"]
  type Stored = StoredStruct<D>["Type"]
  const columns = envelopeColumns(resource, alias, sliced)
  const toOne = columns.at(0)
  // A locked row is read as its stored fields (id, each stored field, the two timestamps), then
  // the envelope's columns, unless both lists are the same (a resource with nothing hidden).
  const storedKeys = resource.storedKeys
  const emptyStored = emptyOf(storedKeys)
  const storedList = selectList(resource, alias, { stored: true })
  const shownAt = columns.at(storedList === columns.select ? 0 : storedKeys.length + 3)
  const toLocked = (v: ReadonlyArray<unknown>): Locked<Stored, Envelope> => {
    const stored = { ...emptyStored }
    for (let i = 0; i < storedKeys.length; i++) stored[storedKeys[i]!] = v[1 + i]
    return { stored: stored as Stored, shown: shownAt(v) }
  }
  // The statements' fixed parts, made once. Writes answer the row as a read does (RETURNING the
  // same select list through the same alias), so a write is one statement.
  const from = sql.literal(`${table} ${alias}`)
  const into = sql.literal(`${table} AS ${alias}`)
  const self = sql.literal(alias)
  const selected = sql.literal(columns.select)
  const lockedSelected = sql.literal(storedList === columns.select ? columns.select : `${storedList},\n  ${columns.select}`)
  const one = (rows: ReadonlyArray<ReadonlyArray<unknown>>) => toOne(rows[0]!)
  const shownTest = shownRow(sliced, alias)
  const shown = sql.literal(andShownRow(sliced, alias))

  const find = (tenantId: number, id: number) =>
    sql`SELECT ${selected} FROM ${from} WHERE ${self}.tenant_id = ${tenantId} AND ${self}.id = ${id}${shown}`.values.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toOne(rows[0]))),
      Effect.orDie
    )

  return {
    /** The select list, for a repository's own statements through `table alias` (a `RETURNING`). */
    selected,
    /** The envelope of each row such a statement answers (`.values`). */
    toOne,
    find,
    findForUpdate: (tenantId: number, id: number) =>
      sql`SELECT ${lockedSelected} FROM ${from} WHERE ${self}.tenant_id = ${tenantId} AND ${self}.id = ${id}${shown} FOR UPDATE`.values.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toLocked(rows[0]))),
        Effect.orDie
      ),
    /** The rows of `ids` the tenant has, each locked and read as `findForUpdate` reads one, in id order. */
    findAllForUpdate: (tenantId: number, ids: ReadonlyArray<number>) =>
      ids.length === 0 ? Effect.succeed([]) : sql`
        SELECT ${lockedSelected} FROM ${from} WHERE ${self}.tenant_id = ${tenantId} AND ${self}.id = ANY(${int8Array([...new Set(ids)])}::int8[])${shown}
        ORDER BY ${self}.id FOR UPDATE`.values.pipe(Effect.map((rows) => rows.map(toLocked)), Effect.orDie),
    /** `internal`: columns of the table that are no field of the resource (a contact's subscription). */
    insert: (tenantId: number, values: Partial<Record<keyof D, unknown>>, internal: Record<string, unknown> = {}) => {
      const record = { tenant_id: tenantId, ...columnValues(resource, values), ...internal }
      return sql`INSERT INTO ${into} ${sql.insert(record)} RETURNING ${selected}`.values.pipe(Effect.map(one), Effect.orDie)
    },
    /** The row must exist (the caller locked it). */
    update: (tenantId: number, id: number, changes: Partial<Record<keyof D, unknown>>) =>
      sql`UPDATE ${into} SET ${sql.update(columnValues(resource, changes))} WHERE ${self}.tenant_id = ${tenantId} AND ${self}.id = ${id}${shown} RETURNING ${selected}`
        .values.pipe(Effect.map(one), Effect.orDie),
    page: (where: Statement.Fragment, order: Order, page: number, updatedSince: string | undefined) =>
      listPage(sql, { columns, from: `${table} ${alias}`, alias, where: sliced ? sql.and([where, sql.literal(shownTest)]) : where, order, page, updatedSince })
  }
}
