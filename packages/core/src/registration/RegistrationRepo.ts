/** Storage port for event registrations. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { SortOrder } from "../Sort.ts"
import type { Registration, RegistrationSortColumns, RegistrationStored } from "./Registration.ts"

export type RegistrationSort = SortOrder<(typeof RegistrationSortColumns)[number]>

export class RegistrationRepo extends Context.Service<RegistrationRepo, {
  /** An event's registrations by `registered_at` (those without one last), then id. */
  readonly listForEvent: (tenantId: number, eventId: number, sort: RegistrationSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Registration>>
  readonly insert: (tenantId: number, values: RegistrationStored) => Effect.Effect<Registration>
}>()("chamber/RegistrationRepo") {}
