/** Members (docs/api.md "Members"): the one declaration of a member's fields. */
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

export const MemberScopes = resourceScopes("members", ["read", "write"])

export const MemberStatuses = ["active", "pending", "lapsed", "former"] as const
export type MemberStatus = (typeof MemberStatuses)[number]

export const MemberSortColumns = sortColumns("name", "created_at")

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

export const MemberResource = defineResource("Member", {
  name: F.required(F.filledText(255, "Acme & Sons, LLC")),
  slug: F.nullable(F.patterned(255, SLUG_PATTERN, "lower-case letters and digits in groups joined by single hyphens", "acme-sons-llc")),
  status: F.required(F.oneOf(MemberStatuses, "active")),
  industry: F.nullable(F.text(255, "Manufacturing")),
  secondary_industries: F.nullable(F.list(F.text(255, "Retail"), 50, ["Retail", "Wholesale"])),
  slogan: F.nullable(F.text(160, "Built to last since 1952")),
  about: F.nullable(F.text(5000, "A family-owned maker of hand tools.")),
  website: F.nullable(F.text(255, "https://acme.example")),
  email: F.nullable(F.email(255, "hello@acme.example")),
  phone: F.nullable(F.text(50, "555-0100")),
  address_line1: F.nullable(F.text(255, "100 Main St")),
  address_line2: F.nullable(F.text(255, "Suite 4")),
  city: F.nullable(F.text(255, "Riverside")),
  state: F.nullable(F.text(50, "CA")),
  zip: F.nullable(F.text(20, "92501")),
  member_since: F.nullable(F.date("1998-04-01")),
  employee_count: F.nullable(F.integer(0, 1_000_000, 42)),
  directory_visible: F.defaulted(F.boolean(true), true),
  custom_fields: F.readOnly(F.customFields("member", { membership_tier: "Gold" }))
})

export const MemberAttributes = MemberResource.Attributes
export type MemberAttributes = typeof MemberAttributes.Type

/** The member resource envelope `{id, attributes, created_at, updated_at}`. */
export const Member = MemberResource.Envelope
export type Member = typeof Member.Type

export const MemberCreate = MemberResource.Create
export type MemberCreate = typeof MemberCreate.Type
export const MemberUpdate = MemberResource.Update
export type MemberUpdate = typeof MemberUpdate.Type

/** A slug from a name: `"Acme & Sons, LLC"` -> `acme-sons-llc` (docs/api.md "Members"). */
export const slugify = (name: string, fallback = "member"): string => {
  const base = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 240)
    .replace(/-+$/g, "")
  return base === "" ? fallback : base
}

/** `base`, else `base-2`, `base-3`...: the first not in `taken`. */
export const uniqueSlug = (base: string, taken: ReadonlySet<string>): string => {
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`
    if (!taken.has(candidate)) return candidate
  }
}
