/** Members handlers: each endpoint of MembersGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Members } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { MemberList, MemberResponse } from "./MembersGroup.ts"

export const MembersHandlers = group("members", Effect.fn(function*(handlers) {
  const members = yield* Members
  return handlers
    .handle("list", ({ query }) => Kit.page(MemberList, query.page, (tenant, page) => members.list(tenant, { ...query, page })))
    .handle("search", ({ query }) => Kit.page(MemberList, query.page, (tenant, page) => members.search(tenant, { ...query, page })))
    .handle("get", ({ params }) => Kit.single(MemberResponse, 200, (tenant) => members.get(tenant, params.member)))
    .handle("create", ({ payload }) => Kit.single(MemberResponse, 201, (tenant) => members.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Kit.single(MemberResponse, 200, (tenant) => members.update(tenant, params.member, payload)))
}))
