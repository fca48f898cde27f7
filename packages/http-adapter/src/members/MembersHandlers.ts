/** Members handlers: decode is done by the contract; these map core results to the envelopes. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Members, pageMeta } from "@chamber/core"
import { Api } from "../Api.ts"
import { CurrentKey } from "../shared/Authentication.ts"
import { fromDomain } from "../shared/domainErrors.ts"
import { jsonBody } from "../shared/JsonBody.ts"
import { parseId } from "../shared/Params.ts"

export const MembersHandlers = HttpApiBuilder.group(Api, "members", Effect.fn(function*(handlers) {
  const members = yield* Members
  return handlers
    .handle("list", ({ query }) =>
      Effect.gen(function*() {
        const key = yield* CurrentKey
        const page = query.page ?? 1
        const result = yield* members.list(key.tenantId, { ...query, page })
        return jsonBody({ data: result.rows, meta: pageMeta(page, result.total) })
      }))
    .handle("search", ({ query }) =>
      Effect.gen(function*() {
        const key = yield* CurrentKey
        const page = query.page ?? 1
        const result = yield* members.search(key.tenantId, { ...query, page }).pipe(fromDomain)
        return jsonBody({ data: result.rows, meta: pageMeta(page, result.total) })
      }))
    .handle("get", ({ params }) =>
      Effect.gen(function*() {
        const key = yield* CurrentKey
        const id = yield* parseId(params.member)
        return { data: yield* members.get(key.tenantId, id).pipe(fromDomain) }
      }))
    .handle("create", ({ payload }) =>
      Effect.gen(function*() {
        const key = yield* CurrentKey
        return { data: yield* members.create(key.tenantId, payload).pipe(fromDomain) }
      }))
    .handle("update", ({ params, payload }) =>
      Effect.gen(function*() {
        const key = yield* CurrentKey
        const id = yield* parseId(params.member)
        return { data: yield* members.update(key.tenantId, id, payload).pipe(fromDomain) }
      }))
}))
