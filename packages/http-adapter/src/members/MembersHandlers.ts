/** Members handlers: each endpoint of MembersGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Members } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { MemberList, MemberResponse, MembersGroup } from "./MembersGroup.ts"

export default groupHandlers(MembersGroup, Effect.fn(function*(handlers) {
  const members = yield* Members
  return handlers
    .handle("list", ({ query }) => Respond.page(MemberList, query.page, (tenant, page) => members.list(tenant, { ...query, page })))
    .handle("search", ({ query }) => Respond.page(MemberList, query.page, (tenant, page) => members.search(tenant, { ...query, page })))
    .handle("get", ({ params }) => Respond.single(MemberResponse, 200, (tenant) => members.get(tenant, params.member)))
    .handle("create", ({ payload }) => Respond.single(MemberResponse, 201, (tenant) => members.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Respond.single(MemberResponse, 200, (tenant) => members.update(tenant, params.member, payload)))
}))
