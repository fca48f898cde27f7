/** The members endpoints (docs/api.md "Members"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Field, Member, MemberCreate, MemberResource, MemberSortColumns, MemberStatuses, MemberUpdate } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { createEndpoint, listEndpoint, updateEndpoint } from "../shared/Endpoints.ts"
import { NotFoundError, ValidationError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"
import { ListParams, RowId } from "../shared/Params.ts"
import { single } from "../shared/Responses.ts"

export const MemberResponse = single(Member)
export const MemberList = MemberResource.List

const sortDoc = "`sort`: name, -name, created_at, -created_at, updated_at or -updated_at (default: by name); anything else means the default."

export class MembersGroup extends HttpApiGroup.make("members")
  .add(
    listEndpoint("/", MemberList, {
      access: "members:read",
      sort: MemberSortColumns,
      summary: "List members",
      description: `The chamber's members, 100 a page, optionally of one \`status\`. ${sortDoc}`
    }, { status: Schema.optionalKey(Field.oneOf(MemberStatuses, "active").schema) }),
    createEndpoint("/", MemberCreate, MemberResponse, {
      access: "members:write",
      summary: "Create a member",
      description: "`name` and `status` are required. A slug is generated from the name when none is given. Fires `member.created`."
    }),
    HttpApiEndpoint.get("search", "/search", {
      query: {
        email: Schema.optionalKey(Field.email(255, "hello@acme.example").schema),
        name: Schema.optionalKey(Field.text(undefined, "acme").schema),
        ...ListParams
      },
      success: MemberList,
      error: ValidationError
    }).pipe(operation({
      access: "members:read",
      sort: MemberSortColumns,
      summary: "Search members",
      description: `By \`email\` (exact, case-insensitive) or \`name\` (substring); at least one is required. ${sortDoc}`
    })),
    HttpApiEndpoint.get("get", "/:member", {
      params: { member: RowId },
      success: MemberResponse,
      error: NotFoundError
    }).pipe(operation({ access: "members:read", summary: "Get a member", description: "One member of the chamber." })),
    updateEndpoint("/:member", "member", MemberUpdate, MemberResponse, {
      access: "members:write",
      summary: "Update a member",
      description: "Only the fields sent change. Fires `member.updated` when something actually changed."
    })
  )
  .middleware(Idempotent).middleware(Authentication)
  .prefix("/api/v1/members")
  .annotateMerge(OpenApi.annotations({ description: "The chamber's member businesses." })) {}
