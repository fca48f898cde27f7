/**
 * How a handler responds, in one expression (`Respond.page(MemberList, query.page, ...)`): the
 * tenant of the request's key, paging and `meta`, the `{data}` envelope and the mapping of
 * domain errors (by kind, docs/api.md "Errors") to the contract's errors. Pages and resources
 * are written as JSON directly, their values type-checked against the endpoint's schema.
 */
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { type DomainError, type KeyContext, type Page, pageMeta, readablePage } from "@chamber/core"
import { CurrentKey } from "../shared/Access.ts"
import { answerBytes } from "./AnswerBytes.ts"
import { BusinessRuleError, Forbidden, Gone, NotFoundError, ServiceUnavailable, ValidationError } from "../shared/HttpErrors.ts"

/**
 * Answers of at least this many characters (a page, the change feed) are sent as bytes: the
 * text is encoded once, into a buffer used again once the answer is written (server/AnswerBytes.ts),
 * and let go at once (bench/README.md "Memory").
 */
const BYTES_FROM = 16 * 1024

/** JSON text as the body of an answer: a string when small, its UTF-8 bytes from BYTES_FROM on. */
const jsonBody = (text: string, status = 200): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  text.length < BYTES_FROM
    ? Effect.succeed(HttpServerResponse.text(text, { status, contentType: "application/json" }))
    : Effect.map(answerBytes(text), (bytes) => HttpServerResponse.uint8Array(bytes, { status, contentType: "application/json" }))

/** An encoded value as the JSON body of an answer. */
const jsonText = (encoded: unknown, status = 200) => jsonBody(JSON.stringify(encoded), status)

/** The contract error each kind of domain error becomes. */
export type HttpErrorOf<E> =
  | (E extends { readonly kind: "NotFound" } ? NotFoundError : never)
  | (E extends { readonly kind: "Invalid" } ? ValidationError : never)
  | (E extends { readonly kind: "BusinessRule" } ? BusinessRuleError : never)
  | (E extends { readonly kind: "Unavailable" } ? ServiceUnavailable : never)
  | (E extends { readonly kind: "Forbidden" } ? Forbidden : never)
  | (E extends { readonly kind: "Gone" } ? Gone : never)

export const toHttpError = (error: DomainError): NotFoundError | ValidationError | BusinessRuleError | ServiceUnavailable | Forbidden | Gone => {
  switch (error.kind) {
    case "NotFound":
      return NotFoundError.body
    case "Invalid":
      return ValidationError.of(error.errors)
    case "BusinessRule":
      return new BusinessRuleError({ message: error.message })
    case "Unavailable":
      return new ServiceUnavailable({ message: error.message })
    case "Forbidden":
      return new Forbidden({ message: error.message })
    case "Gone":
      return new Gone({ message: error.message })
  }
}

/** `self`'s value as an answer, or its domain error as the contract's. */
const answered = <A, B, E extends DomainError, R>(self: Effect.Effect<A, E, R>, f: (a: A) => Effect.Effect<B>): Effect.Effect<B, HttpErrorOf<E>, R> =>
  Effect.matchEffect(self, {
    onSuccess: f,
    // toHttpError's result is the member of the union that E's kind selects.
    onFailure: (e) => Effect.fail(toHttpError(e) as HttpErrorOf<E>)
  })

/** What `f` makes of the request's key. */
const withKey = <A, E, R>(f: (key: KeyContext) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R | CurrentKey> =>
  Effect.flatMap(Effect.service(CurrentKey), f)

const forTenant = <A, E, R>(run: (tenantId: number) => Effect.Effect<A, E, R>) => withKey((key) => run(key.tenantId))

/** An answer made from the request's key alone (the connection check), written as JSON directly. */
export const fromKey = <S extends Schema.Top>(_response: S, answer: (key: KeyContext) => S["Encoded"]) =>
  withKey((key) => jsonText(answer(key)))

/**
 * An answer a core call made from the request's key as JSON text, written as it is (the change
 * feed: its events' `data` is never parsed on the way, bench/changes.ts); the core call owns its
 * shape, that of `_response`.
 */
export const textForKey = <S extends Schema.Top, E extends DomainError, R>(
  _response: S,
  run: (key: KeyContext) => Effect.Effect<string, E, R>
) => answered(withKey(run), (text) => jsonBody(text))

type DataOf<S extends Schema.Top> = S["Encoded"] extends { readonly data: infer D } ? D : never

/**
 * `{data}` of one resource of the key's tenant, with the status the endpoint declares for it.
 * Written as JSON directly, as pages are: the resource must have the type of the response
 * schema's `data`, and it is not encoded through the schema again (bench/README.md, "Write
 * endpoints").
 */
export const single = <S extends Schema.Top, A extends DataOf<S>, E extends DomainError, R>(
  response: S,
  status: 200 | 201 | 202,
  run: (tenantId: number) => Effect.Effect<A, E, R>
) =>
  // `{data}` with `data` of the schema's `data` type is the schema's encoded type.
  withStatus(response, run, (data) => [status, { data } as S["Encoded"]])

/** The value itself, not wrapped in `{data}` (a webhook subscription is a flat object, docs/webhooks.md). */
export const bare = <A, E extends DomainError, R>(run: (tenantId: number) => Effect.Effect<A, E, R>) => answered(forTenant(run), Effect.succeed)

type ItemOf<L extends Schema.Top> = L["Encoded"] extends { readonly data: ReadonlyArray<infer I> } ? I : never

/**
 * `{data, meta}` of the page asked. `current_page` is the page asked digit for digit, also past
 * the numbers JSON parsers hold exactly (such a page has no rows).
 */
const pageText = (asked: bigint, result: Page<unknown>) => {
  if (asked <= BigInt(Number.MAX_SAFE_INTEGER)) return jsonText({ data: result.rows, meta: pageMeta(Number(asked), result.total) })
  const { last_page, per_page, total } = pageMeta(1, result.total)
  return jsonBody(`{"data":${JSON.stringify(result.rows)},"meta":{"current_page":${asked},"per_page":${per_page},"total":${total},"last_page":${last_page}}}`)
}

/**
 * A page `{data, meta}` of the key's tenant (`page` defaults to 1; any whole number, a page past
 * the last answering no rows and the true total). Its rows must have the type of the list
 * schema's items; they are written as JSON directly, without encoding them through the schema
 * again: their type already holds them to it.
 */
export const page = <L extends Schema.Top, E extends DomainError, R>(
  _list: L,
  page: bigint | undefined,
  run: (tenantId: number, page: number) => Effect.Effect<Page<ItemOf<L>>, E, R>
) => {
  const asked = page ?? 1n
  return answered(forTenant((tenantId) => run(tenantId, readablePage(asked))), (result) => pageText(asked, result))
}

/**
 * One resource whose status depends on what happened (a subscribe: 201 when it made or renewed
 * something, 200 when it found it so); the body is checked against the response schema's type.
 */
export const withStatus = <S extends Schema.Top, A, E extends DomainError, R>(
  _response: S,
  run: (tenantId: number) => Effect.Effect<A, E, R>,
  answer: (result: A) => readonly [status: 200 | 201 | 202, body: S["Encoded"]]
) =>
  answered(forTenant(run), (result) => {
    const [status, body] = answer(result)
    return jsonText(body, status)
  })
