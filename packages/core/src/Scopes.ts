/** API key scopes (docs/api.md "Authentication and scopes") and the shorthands the CLI accepts. */
export const ALL_SCOPES = [
  "members:read", "members:write",
  "contacts:read", "contacts:write",
  "events:read", "events:write",
  "registrations:read",
  "deals:read", "deals:write",
  "invoices:read", "invoices:write",
  "payments:read", "payments:write",
  "sponsorships:read", "placements:read", "bookings:read",
  "hooks:write"
] as const

export type Scope = (typeof ALL_SCOPES)[number]

/** `read`: every `:read` scope except the opt-in `bookings:read`. */
export const READ_SCOPES: ReadonlyArray<Scope> = ALL_SCOPES.filter((s) => s.endsWith(":read") && s !== "bookings:read")

export const isScope = (value: string): value is Scope => (ALL_SCOPES as ReadonlyArray<string>).includes(value)

export const canWrite = (scopes: ReadonlyArray<string>): boolean => scopes.some((s) => s.endsWith(":write"))

/**
 * Parses a comma-separated scope list; `read` and `all` expand. Returns the unknown names
 * instead when there are any. Order is canonical and duplicates are dropped.
 */
export const parseScopeList = (
  list: string
): { readonly ok: true; readonly scopes: ReadonlyArray<Scope> } | { readonly ok: false; readonly unknown: ReadonlyArray<string> } => {
  const wanted = new Set<string>()
  const unknown: Array<string> = []
  for (const raw of list.split(",")) {
    const name = raw.trim()
    if (name === "") continue
    if (name === "all") ALL_SCOPES.forEach((s) => wanted.add(s))
    else if (name === "read") READ_SCOPES.forEach((s) => wanted.add(s))
    else if (isScope(name)) wanted.add(name)
    else unknown.push(name)
  }
  if (unknown.length > 0) return { ok: false, unknown }
  return { ok: true, scopes: ALL_SCOPES.filter((s) => wanted.has(s)) }
}
