/**
 * Storage port for an import written in slices (docs/architecture.md "On the embedded database:
 * slices under a hold"). Where the database is one session that a long transaction would hold (the
 * embedded one), an import writes its records in short transactions of their own under a hold:
 * nothing the hold marks is shown to anyone else, nor fed to the change feed or the relay, until
 * `publish` shows it all in one short transaction; `discard` takes it all back. So the result is
 * all or nothing, as one transaction's, while the API is served between slices.
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"

export class ImportHolds extends Context.Service<ImportHolds, {
  /** True where an import is written in slices; false where one transaction serves (PostgreSQL). */
  readonly sliced: boolean
  /** A new hold on an import into the chamber; answers its id. */
  readonly open: (tenantId: number) => Effect.Effect<number>
  /** `self` in a transaction of its own, whose writes the hold marks and whose reads see what the hold marks. */
  readonly slice: <A, E, R>(hold: number, self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Shows everything the hold marks, at once. */
  readonly publish: (hold: number) => Effect.Effect<void>
  /** Removes everything the hold marks, a bounded batch a transaction, then the hold. */
  readonly discard: (hold: number) => Effect.Effect<void>
  /** Discards the holds of imports that stopped without publishing or discarding (their process is gone, or no slice has touched them for `idle`); answers how many. */
  readonly sweep: (idle: Duration.Input) => Effect.Effect<number>
}>()("chamber/ImportHolds") {}
