/**
 * A resource's API key scopes, declared beside its fields. `Scopes.ts` collects every
 * declaration that `Resources.ts` exports, so a new resource's scopes need no other edit.
 */

const TypeId = "~chamber/ResourceScopes" as const

export type Action = "read" | "write"

export interface ResourceScopes<S extends string> {
  readonly [TypeId]: typeof TypeId
  /** Every scope of the resource: `<resource>:<action>`. */
  readonly scopes: ReadonlyArray<S>
  /** Those the `read` shorthand gives. */
  readonly inRead: ReadonlyArray<S>
}

/**
 * The scopes `<resource>:<action>` for each action. `optIn`: its `:read` scope is left out of the
 * `read` shorthand (a key gets it by name, or with `all`).
 */
export const resourceScopes = <const R extends string, const A extends Action>(
  resource: R,
  actions: ReadonlyArray<A>,
  options?: { readonly optIn?: boolean }
): ResourceScopes<`${R}:${A}`> => {
  const scopes = actions.map((action) => `${resource}:${action}` as const)
  return {
    [TypeId]: TypeId,
    scopes,
    inRead: options?.optIn === true ? [] : scopes.filter((scope) => scope.endsWith(":read"))
  }
}

/** The scopes a module's exported declarations name: the union of their literals. */
export type ScopesIn<M> = { readonly [K in keyof M]: M[K] extends ResourceScopes<infer S> ? S : never }[keyof M]
