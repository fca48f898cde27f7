/**
 * API key scopes (docs/api.md "Authentication and scopes") and the shorthands the CLI accepts.
 * Each resource declares its own beside its fields (`resourceScopes`), listed once in
 * `Resources.ts` `ResourceScopeList`, so a new resource edits nothing here.
 */
import * as Resources from "./Resources.ts"
import type { ResourceScopes, ScopesIn } from "./resource/ResourceScopes.ts"

/** Every scope a resource declares: a literal union, so a mistyped scope does not compile. */
export type Scope = ScopesIn<typeof Resources>

type Listed = (typeof Resources.ResourceScopeList)[number] extends ResourceScopes<infer S> ? S : never
/** Compiles only while every declaration `Resources.ts` exports is in its `ResourceScopeList`. */
const everyDeclarationListed: [Exclude<Scope, Listed>] extends [never] ? true : never = true
void everyDeclarationListed

const declared: ReadonlyArray<ResourceScopes<Scope>> = Resources.ResourceScopeList

/** Every scope, in `ResourceScopeList`'s order (the canonical order of lists that show them). */
export const ALL_SCOPES: ReadonlyArray<Scope> = declared.flatMap((d) => d.scopes)

/** `read`: every `:read` scope a resource does not declare opt-in (`bookings:read` is). */
export const READ_SCOPES: ReadonlyArray<Scope> = declared.flatMap((d) => d.inRead)

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

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`. */
const distance = (a: string, b: string): number => {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  }
  return d[a.length]![b.length]!
}

/** The scope or shorthand a mistyped name most likely meant: at most two edits away, any case; undefined when none is. */
export const closestScope = (name: string): string | undefined => {
  const typed = name.toLowerCase()
  let best: { readonly scope: string; readonly edits: number } | undefined
  for (const scope of ["read", "all", ...ALL_SCOPES]) {
    const edits = distance(typed, scope)
    if (edits <= 2 && edits < typed.length && (best === undefined || edits < best.edits)) best = { scope, edits }
  }
  return best?.scope
}

/** What is wrong with unknown scope names: each with the scope it most likely meant. */
export const unknownScopesMessage = (unknown: ReadonlyArray<string>): string => {
  if (unknown.length === 1) {
    const name = unknown[0]!
    const meant = closestScope(name)
    return meant === undefined ? `Unknown scope ${name}.` : `Unknown scope ${name}: did you mean ${meant}?`
  }
  const each = unknown.map((name) => {
    const meant = closestScope(name)
    return meant === undefined ? name : `${name} (did you mean ${meant}?)`
  })
  return `Unknown scopes: ${each.join(", ")}.`
}
