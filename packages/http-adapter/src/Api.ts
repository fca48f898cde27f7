/** The whole HTTP contract: every group, the 422 transform, and the OpenAPI description. */
import { HttpApi, OpenApi } from "effect/http-api"
import { MeGroup } from "./me/MeGroup.ts"
import { MembersGroup } from "./members/MembersGroup.ts"
import { ValidationErrors } from "./shared/ValidationErrors.ts"

export class Api extends HttpApi.make("chamber-data-api")
  .add(MeGroup)
  .add(MembersGroup)
  .middleware(ValidationErrors)
  .annotate(HttpApi.ParseOptions, { errors: "all", onExcessProperty: "ignore" })
  .annotateMerge(
    OpenApi.annotations({
      title: "Chamber Data API",
      version: "1.0.0",
      description: "A chamber of commerce's members, contacts, events, invoices and more, for integrators."
    })
  ) {}
