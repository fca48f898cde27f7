/** Members (spec 2.2, 4.1): the resource as the API shows it, and the create/update inputs with their bounds. */
import { Schema } from "effect"
import * as F from "../Fields.ts"

export const MemberStatuses = ["active", "pending", "lapsed", "former"] as const
export type MemberStatus = (typeof MemberStatuses)[number]
export const MemberStatus = Schema.Literals(MemberStatuses)

export const MemberSortColumns = ["name", "created_at"] as const

export const MemberAttributes = Schema.Struct({
  name: Schema.String,
  slug: Schema.NullOr(Schema.String),
  status: MemberStatus,
  industry: Schema.NullOr(Schema.String),
  secondary_industries: Schema.NullOr(Schema.Array(Schema.String)),
  slogan: Schema.NullOr(Schema.String),
  about: Schema.NullOr(Schema.String),
  website: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  address_line1: Schema.NullOr(Schema.String),
  address_line2: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  state: Schema.NullOr(Schema.String),
  zip: Schema.NullOr(Schema.String),
  member_since: Schema.NullOr(Schema.String),
  employee_count: Schema.NullOr(Schema.Int),
  directory_visible: Schema.Boolean,
  custom_fields: Schema.Record(Schema.String, Schema.Unknown)
})
export type MemberAttributes = typeof MemberAttributes.Type

/** The member resource envelope `{id, attributes, created_at, updated_at}`. */
export const Member = Schema.Struct({
  id: Schema.Int,
  attributes: MemberAttributes,
  created_at: Schema.NullOr(Schema.String),
  updated_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Member" })
export type Member = typeof Member.Type

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

const opt = <S extends Schema.Top>(schema: S, field: string, kind: string) =>
  Schema.optionalKey(F.nullable(schema, field, kind))

const str = (field: string, max: number) => opt(F.text(field, max), field, "a string")

const slug = F.text("slug", 255).check(
  Schema.isPattern(SLUG_PATTERN, {
    message: "The slug field must be lower-case letters and digits in groups joined by single hyphens."
  })
)

const name = F.text("name", 255).check(F.filled("name"))

const memberFields = {
  name: name.pipe(Schema.annotateKey(F.required("name"))),
  status: F.oneOf("status", MemberStatuses).pipe(Schema.annotateKey(F.required("status"))),
  industry: str("industry", 255),
  secondary_industries: opt(F.arrayOf(F.text("secondary_industries", 255), "secondary_industries"), "secondary_industries", "an array"),
  website: str("website", 255),
  email: opt(F.email("email"), "email", "a valid email address"),
  phone: str("phone", 50),
  address_line1: str("address_line1", 255),
  address_line2: str("address_line2", 255),
  city: str("city", 255),
  state: str("state", 50),
  zip: str("zip", 20),
  member_since: opt(F.date("member_since"), "member_since", "a valid date (YYYY-MM-DD)"),
  employee_count: opt(F.integer("employee_count", 0, 1_000_000), "employee_count", "an integer"),
  slug: opt(slug, "slug", "a string"),
  slogan: str("slogan", 160),
  about: str("about", 5000),
  directory_visible: opt(F.boolean("directory_visible"), "directory_visible", "true or false")
}

export const MemberCreate = Schema.Struct(memberFields).annotate({ identifier: "MemberCreate" })
export type MemberCreate = typeof MemberCreate.Type

export const MemberUpdate = Schema.Struct({
  ...memberFields,
  name: Schema.optionalKey(name),
  status: Schema.optionalKey(F.oneOf("status", MemberStatuses))
}).annotate({ identifier: "MemberUpdate" })
export type MemberUpdate = typeof MemberUpdate.Type

/** Every stored member column the API can write, by its API name. */
export type MemberValues = Omit<MemberAttributes, "custom_fields"> & {
  readonly custom_fields: Readonly<Record<string, unknown>>
}

/** Ruling 17: `"Acme & Sons, LLC"` -> `acme-sons-llc`. */
export const slugify = (name: string): string => {
  const base = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 240)
    .replace(/-+$/g, "")
  return base === "" ? "member" : base
}

/** `base`, else `base-2`, `base-3`...: the first not in `taken`. */
export const uniqueSlug = (base: string, taken: ReadonlySet<string>): string => {
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`
    if (!taken.has(candidate)) return candidate
  }
}
