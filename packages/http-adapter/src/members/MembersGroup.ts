/** The members endpoints of spec 4.1: the contract only. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Fields, ListOf, Member, MemberCreate, MemberStatuses, MemberUpdate } from "@chamber/core"
import { Authentication, RequiredScope } from "../shared/Authentication.ts"
import { NotFoundError, ValidationError } from "../shared/HttpErrors.ts"
import { idParam, PageQuery, SortQuery } from "../shared/Params.ts"

export const MemberResponse = Schema.Struct({ data: Member })
export const MemberList = ListOf(Member).annotate({ identifier: "MemberList" })

export class MembersGroup extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: { status: Schema.optionalKey(Fields.oneOf("status", MemberStatuses)), sort: SortQuery, page: PageQuery },
      success: MemberList,
      error: ValidationError
    }).annotate(RequiredScope, "members:read"),
    HttpApiEndpoint.post("create", "/", {
      payload: MemberCreate,
      success: MemberResponse.pipe(HttpApiSchema.status(201)),
      error: ValidationError
    }).annotate(RequiredScope, "members:write"),
    HttpApiEndpoint.get("search", "/search", {
      query: {
        email: Schema.optionalKey(Fields.email("email")),
        name: Schema.optionalKey(Fields.string("name")),
        sort: SortQuery,
        page: PageQuery
      },
      success: MemberList,
      error: ValidationError
    }).annotate(RequiredScope, "members:read"),
    HttpApiEndpoint.get("get", "/:member", {
      params: idParam("member"),
      success: MemberResponse,
      error: NotFoundError
    }).annotate(RequiredScope, "members:read"),
    HttpApiEndpoint.patch("update", "/:member", {
      params: idParam("member"),
      payload: MemberUpdate,
      success: MemberResponse,
      error: [NotFoundError, ValidationError]
    }).annotate(RequiredScope, "members:write")
  )
  .middleware(Authentication)
  .prefix("/api/v1/members") {}
