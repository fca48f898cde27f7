/** The events endpoints (docs/api.md "Events"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Event, EventCreate, EventResource, EventSortColumns, EventUpdate, RegistrationResource, RegistrationSortColumns } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { createEndpoint, listEndpoint, updateEndpoint } from "../shared/Endpoints.ts"
import { NotFoundError, ValidationError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"
import { ListParams, RowId } from "../shared/Params.ts"
import { single } from "../shared/Responses.ts"

export const EventResponse = single(Event)
export const EventList = EventResource.List
export const RegistrationList = RegistrationResource.List

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    listEndpoint("/", EventList, {
      access: "events:read",
      sort: EventSortColumns,
      summary: "List events",
      description: "100 a page. `sort`: starts_at, -starts_at, created_at, -created_at, updated_at or -updated_at (default: newest-starting first); anything else means the default."
    }),
    createEndpoint("/", EventCreate, EventResponse, {
      access: "events:write",
      summary: "Create an event",
      description:
        "`title` and `starts_at` are required; `ends_at` must be after `starts_at`. `status` is draft (the default) or " +
        "published; `is_public` defaults to false; an `event_type` that is not chamber, member or community is chamber. " +
        "Fires `event.created`."
    }),
    updateEndpoint("/:event", "event", EventUpdate, EventResponse, {
      access: "events:write",
      summary: "Update an event",
      description:
        "Only the fields sent change. A cancelled or completed event keeps its status whatever is sent; its other fields may " +
        "still change. `starts_at` and `event_type` cannot be null. Fires `event.updated` when what the event shows changed."
    }),
    HttpApiEndpoint.get("registrations", "/:event/registrations", {
      params: { event: RowId },
      query: ListParams,
      success: RegistrationList,
      error: [NotFoundError, ValidationError]
    }).pipe(operation({
      access: "registrations:read",
      sort: RegistrationSortColumns,
      summary: "List an event's registrations",
      description: "100 a page, by registration time (registrations without one last), then id. `sort`: updated_at or -updated_at; anything else means the default."
    }))
  )
  .middleware(Idempotent).middleware(Authentication)
  .prefix("/api/v1/events")
  .annotateMerge(OpenApi.annotations({ description: "The chamber's events." })) {}
