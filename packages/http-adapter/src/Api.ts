/**
 * The whole HTTP contract: every group, the 422 transform, and the OpenAPI description. Adding
 * a resource adds one line to `Groups` here (docs/architecture.md "Adding a resource").
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { BookingsGroup } from "./bookings/BookingsGroup.ts"
import { ChangesGroup } from "./changes/ChangesGroup.ts"
import { ContactsGroup } from "./contacts/ContactsGroup.ts"
import { DealsGroup } from "./deals/DealsGroup.ts"
import { EventsGroup } from "./events/EventsGroup.ts"
import { HooksGroup } from "./hooks/HooksGroup.ts"
import { InvoicesGroup } from "./invoices/InvoicesGroup.ts"
import { MeGroup } from "./me/MeGroup.ts"
import { MembersGroup } from "./members/MembersGroup.ts"
import { PaymentsGroup } from "./payments/PaymentsGroup.ts"
import { PlacementsGroup } from "./placements/PlacementsGroup.ts"
import { finishDocument } from "./shared/OpenApiDocument.ts"
import { groupsOf, served } from "./shared/Served.ts"
import { ValidationErrors } from "./shared/ValidationErrors.ts"
import { SponsorshipsGroup } from "./sponsorships/SponsorshipsGroup.ts"

/**
 * Every group of the API, one line each, with the module of its handlers (loaded by the server
 * only, `Server.ts`). The contract and the server's handlers both derive from this list.
 */
export const Groups = [
  served(MeGroup, () => import("./me/MeHandlers.ts")),
  served(MembersGroup, () => import("./members/MembersHandlers.ts")),
  served(ContactsGroup, () => import("./contacts/ContactsHandlers.ts")),
  served(EventsGroup, () => import("./events/EventsHandlers.ts")),
  served(InvoicesGroup, () => import("./invoices/InvoicesHandlers.ts")),
  served(PaymentsGroup, () => import("./payments/PaymentsHandlers.ts")),
  served(DealsGroup, () => import("./deals/DealsHandlers.ts")),
  served(SponsorshipsGroup, () => import("./sponsorships/SponsorshipsHandlers.ts")),
  served(PlacementsGroup, () => import("./placements/PlacementsHandlers.ts")),
  served(BookingsGroup, () => import("./bookings/BookingsHandlers.ts")),
  served(HooksGroup, () => import("./hooks/HooksHandlers.ts")),
  served(ChangesGroup, () => import("./changes/ChangesHandlers.ts"))
] as const

const description = `A chamber of commerce's members, contacts, events, invoices and more, for integrators.

Every request carries \`Authorization: Bearer <key>\` (keys are \`cck_\` + 40 characters). Each operation
names the scope it requires; a key without it gets 403. Lists answer 100 rows a page as \`{data, meta}\`.`

export class Api extends HttpApi.make("chamber-data-api")
  .add(...groupsOf(Groups))
  .middleware(ValidationErrors)
  .annotate(HttpApi.ParseOptions, { errors: "all", onExcessProperty: "ignore" })
  .annotateMerge(
    OpenApi.annotations({
      title: "Chamber Data API",
      version: "1.0.0",
      description,
      servers: [{ url: "/", description: "This server" }],
      transform: finishDocument
    })
  ) {}
