/**
 * The whole HTTP contract: every group, the 422 transform, and the OpenAPI description. Adding
 * a resource adds one `.add(...)` here (docs/architecture.md "Adding a resource").
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
import { ValidationErrors } from "./shared/ValidationErrors.ts"
import { SponsorshipsGroup } from "./sponsorships/SponsorshipsGroup.ts"

const description = `A chamber of commerce's members, contacts, events, invoices and more, for integrators.

Every request carries \`Authorization: Bearer <key>\` (keys are \`cck_\` + 40 characters). Each operation
names the scope it requires; a key without it gets 403. Lists answer 100 rows a page as \`{data, meta}\`.`

export class Api extends HttpApi.make("chamber-data-api")
  .add(MeGroup)
  .add(MembersGroup)
  .add(ContactsGroup)
  .add(EventsGroup)
  .add(InvoicesGroup)
  .add(PaymentsGroup)
  .add(DealsGroup)
  .add(SponsorshipsGroup)
  .add(PlacementsGroup)
  .add(BookingsGroup)
  .add(HooksGroup)
  .add(ChangesGroup)
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
