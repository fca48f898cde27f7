/**
 * The endpoint shapes every resource repeats, declared once: a list (a page with `sort` and
 * `page`, docs/api.md "Lists, paging, sorting"), a create (201 `{data}`) and an update of one row
 * by its id. Each takes the operation's access and description (shared/Operation.ts), so a
 * resource's group is a list of these.
 */
import type * as Schema from "effect/Schema"
import type * as HttpRouter from "effect/http/HttpRouter"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import { NotFoundError, ValidationError } from "./HttpErrors.ts"
import { operation, type OperationDoc } from "./Operation.ts"
import { ListParams, RowId } from "./Params.ts"

/** GET a page of rows, `{data, meta}`; `filters` are query parameters beside `updated_since`, `sort` (its columns in `doc`) and `page`. */
export const listEndpoint = <const Path extends HttpRouter.PathInput, L extends Schema.Top, const Q extends Schema.Struct.Fields = {}>(
  path: Path,
  list: L,
  doc: OperationDoc & { readonly sort: ReadonlyArray<string> },
  filters?: Q
) =>
  HttpApiEndpoint.get("list", path, {
    query: { ...(filters as Q), ...ListParams },
    success: list,
    error: ValidationError
  }).pipe(operation(doc))

/** POST a new row: 201 with `response` (`{data}`). */
export const createEndpoint = <const Path extends HttpRouter.PathInput, P extends Schema.Top, R extends Schema.Top>(
  path: Path,
  payload: P,
  response: R,
  doc: OperationDoc
) =>
  HttpApiEndpoint.post("create", path, {
    payload,
    success: response.pipe(HttpApiSchema.status(201)),
    error: ValidationError
  }).pipe(operation(doc))

/** PATCH the row `:id` names (`/:member`): only the fields sent change; another chamber's row is a 404. */
export const updateEndpoint = <const Path extends HttpRouter.PathInput, const Id extends string, P extends Schema.Top, R extends Schema.Top>(
  path: Path,
  id: Id,
  payload: P,
  response: R,
  doc: OperationDoc
) =>
  HttpApiEndpoint.patch("update", path, {
    params: { [id]: RowId } as { readonly [K in Id]: typeof RowId },
    payload,
    success: response,
    error: [NotFoundError, ValidationError]
  }).pipe(operation(doc))
