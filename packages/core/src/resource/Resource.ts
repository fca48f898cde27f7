/**
 * One declaration per resource: its fields, written once, give the attribute schema, the
 * resource envelope (docs/api.md "Lists, paging, sorting"), the create and update payloads, the create defaults, change
 * detection and a full example. Storage derives its column list from the same fields
 * (packages/pg-adapter ResourceSql.ts); tests derive their fixtures from them.
 */
import * as Schema from "effect/Schema"
import { ListOf, PER_PAGE } from "../Pagination.ts"
import type { Field, Presence } from "./Field.ts"

export type Fields = Readonly<Record<string, Field>>

type SchemaOf<F> = F extends Field<infer S, Presence> ? S : never
type PresenceOf<F> = F extends Field<Schema.Top, infer P> ? P : never

type ReadSchema<F> = PresenceOf<F> extends "nullable" | "readOnlyNullable" | "writeOnly" ? Schema.NullOr<SchemaOf<F>> : SchemaOf<F>
type CreateSchema<F> = PresenceOf<F> extends "required" ? SchemaOf<F> : Schema.optionalKey<Schema.NullOr<SchemaOf<F>>>
type UpdateSchema<F> = PresenceOf<F> extends "required" ? Schema.optionalKey<SchemaOf<F>>
  : Schema.optionalKey<Schema.NullOr<SchemaOf<F>>>

/** The fields a client may write (all but the read-only ones). */
export type WritableKeys<D extends Fields> = { [K in keyof D]: PresenceOf<D[K]> extends "readOnly" | "readOnlyNullable" ? never : K }[keyof D]

/** The fields a client sees (all but `writeOnly`). */
export type ShownKeys<D extends Fields> = { [K in keyof D]: PresenceOf<D[K]> extends "writeOnly" ? never : K }[keyof D]

export type AttributesStruct<D extends Fields> = Schema.Struct<{ readonly [K in ShownKeys<D>]: ReadSchema<D[K]> }>
/** Every stored field: the attributes and the write-only ones. */
export type StoredStruct<D extends Fields> = Schema.Struct<{ readonly [K in keyof D]: ReadSchema<D[K]> }>
export type CreateStruct<D extends Fields> = Schema.Struct<{ readonly [K in WritableKeys<D>]: CreateSchema<D[K]> }>
export type UpdateStruct<D extends Fields> = Schema.Struct<{ readonly [K in WritableKeys<D>]: UpdateSchema<D[K]> }>

const Timestamp = Schema.NullOr(Schema.String.annotate({ format: "date-time" }))

export type EnvelopeStruct<D extends Fields> = Schema.Struct<{
  readonly id: Schema.Int
  readonly attributes: AttributesStruct<D>
  readonly created_at: typeof Timestamp
  readonly updated_at: typeof Timestamp
}>

export interface Resource<Name extends string, D extends Fields> {
  readonly name: Name
  readonly fields: D
  /** Every attribute name (the fields shown), in declaration order. */
  readonly keys: ReadonlyArray<ShownKeys<D> & string>
  /** Every stored field's name: the attributes and the write-only fields. */
  readonly storedKeys: ReadonlyArray<keyof D & string>
  readonly Attributes: AttributesStruct<D>
  /** `{id, attributes, created_at, updated_at}`. */
  readonly Envelope: EnvelopeStruct<D>
  /** A page of them, `{data, meta}`. */
  readonly List: ReturnType<typeof ListOf<EnvelopeStruct<D>>>
  readonly Create: CreateStruct<D>
  readonly Update: UpdateStruct<D>
  /** A complete, valid set of attributes. */
  readonly example: AttributesStruct<D>["Type"]
  /** The stored values of a new row: what the input gives, else each field's default (null for nullable fields). */
  readonly defaults: (input: Partial<Record<keyof D, unknown>>) => StoredStruct<D>["Type"]
  /**
   * What an update would change: the given fields whose value differs from the stored one.
   * A null for a `defaulted` field leaves it; a map field (custom fields) is merged key by key.
   */
  readonly changes: (
    current: StoredStruct<D>["Type"],
    input: Partial<Record<keyof D, unknown>>
  ) => Partial<StoredStruct<D>["Type"]>
}

const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === "object" && a !== null && typeof b === "object" && b !== null && JSON.stringify(a) === JSON.stringify(b))

const isMap = (field: Field) => typeof field.kind.column === "object"

const requiredMessage = { messageMissingKey: "The {field} field is required." }

const nullableOf = (field: Field, schema: Schema.Top = field.kind.schema) =>
  Schema.NullOr(schema).annotate({ message: `The {field} field must be ${field.kind.expected}.` })

const writeSchema = (field: Field) => field.kind.write ?? field.kind.schema

const readSchema = (field: Field): Schema.Top =>
  field.presence === "nullable" || field.presence === "readOnlyNullable" || field.presence === "writeOnly" ? nullableOf(field) : field.kind.schema

const createSchema = (field: Field): Schema.Top =>
  field.presence === "required"
    ? writeSchema(field).pipe(Schema.annotateKey(requiredMessage))
    : Schema.optionalKey(nullableOf(field, writeSchema(field)))

const updateSchema = (field: Field): Schema.Top =>
  field.presence === "required" ? Schema.optionalKey(writeSchema(field)) : Schema.optionalKey(nullableOf(field, writeSchema(field)))

const mapFields = (fields: Fields, keep: (f: Field) => boolean, to: (f: Field) => Schema.Top) =>
  Object.fromEntries(Object.entries(fields).filter(([, f]) => keep(f)).map(([k, f]) => [k, to(f)]))

const writable = (f: Field) => f.presence !== "readOnly" && f.presence !== "readOnlyNullable"
const shown = (f: Field) => f.presence !== "writeOnly"

export const defineResource = <const Name extends string, const D extends Fields>(name: Name, fields: D): Resource<Name, D> => {
  type Attributes = AttributesStruct<D>["Type"]
  type Stored = StoredStruct<D>["Type"]
  const storedKeys = Object.keys(fields) as Array<keyof D & string>
  const keys = storedKeys.filter((k) => shown(fields[k]!)) as Array<ShownKeys<D> & string>
  const example = Object.fromEntries(keys.map((k) => [k, fields[k]!.kind.example])) as Attributes

  // The mapped types above state what these build; TypeScript cannot follow Object.fromEntries.
  const Attributes = Schema.Struct(mapFields(fields, shown, readSchema)).annotate({
    identifier: `${name}Attributes`
  }) as unknown as AttributesStruct<D>
  const one = { id: 1, attributes: example, created_at: "2026-01-15T09:30:00.000Z", updated_at: "2026-03-02T16:05:00.000Z" }
  const Envelope = Schema.Struct({ id: Schema.Int, attributes: Attributes, created_at: Timestamp, updated_at: Timestamp }).annotate({
    identifier: name,
    examples: [one]
  }) as unknown as EnvelopeStruct<D>
  const List = ListOf(Envelope).annotate({
    identifier: `${name}List`,
    examples: [{ data: [one], meta: { current_page: 1, per_page: PER_PAGE, total: 1, last_page: 1 } }]
  })
  const writableExample = Object.fromEntries(storedKeys.filter((k) => writable(fields[k]!)).map((k) => [k, fields[k]!.kind.example]))
  const Create = Schema.Struct(mapFields(fields, writable, createSchema)).annotate({
    identifier: `${name}Create`,
    examples: [writableExample]
  }) as unknown as CreateStruct<D>
  const Update = Schema.Struct(mapFields(fields, writable, updateSchema)).annotate({
    identifier: `${name}Update`,
    examples: [writableExample]
  }) as unknown as UpdateStruct<D>

  const defaults = (input: Partial<Record<keyof D, unknown>>): Stored => {
    const out: Record<string, unknown> = {}
    for (const key of storedKeys) {
      const field = fields[key]!
      const given = input[key]
      out[key] = given !== undefined && given !== null ? given : field.default ?? (isMap(field) ? {} : null)
    }
    return out as Stored
  }

  const changes = (current: Stored, input: Partial<Record<keyof D, unknown>>): Partial<Stored> => {
    const out: Record<string, unknown> = {}
    const stored = current as Record<string, unknown>
    for (const key of storedKeys) {
      const field = fields[key]!
      let value = input[key]
      if (value === undefined || (value === null && field.presence === "defaulted")) continue
      if (isMap(field)) value = { ...(stored[key] as object), ...(value as object) }
      if (!sameValue(value, stored[key])) out[key] = value
    }
    return out as Partial<Stored>
  }

  return { name, fields, keys, storedKeys, Attributes, Envelope, List, Create, Update, example, defaults, changes }
}
