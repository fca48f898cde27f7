/**
 * What the server checks of the contract before it serves (fail closed, docs/architecture.md
 * "Adding a resource"): every endpoint states its access; an endpoint that takes input declares
 * the validation 422, before any business-rule 422; an endpoint with a path id declares the 404.
 * A forgotten `operation(...)` stops the server at start instead of opening the endpoint.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { RequiredAccess } from "../shared/Access.ts"
import { BusinessRuleError, declaredAt, NotFoundError, ValidationError } from "../shared/HttpErrors.ts"

export class ContractViolation extends Error {
  readonly problems: ReadonlyArray<string>
  constructor(problems: ReadonlyArray<string>) {
    super(`The HTTP contract is incomplete; the server will not start:\n- ${problems.join("\n- ")}`)
    this.problems = problems
  }
}

export const contractProblems = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, group }) {
      const name = `${endpoint.method} ${endpoint.path} (${group.identifier}.${endpoint.identifier})`
      const declared = (error: Schema.Top) => declaredAt(endpoint.error, error)
      if (Context.getOrUndefined(endpoint.annotations, RequiredAccess) === undefined) {
        problems.push(`${name} states no access: describe it with operation({ access, summary, description })`)
      }
      if ((endpoint.query !== undefined || endpoint.payload.size > 0) && declared(ValidationError) === -1) {
        problems.push(`${name} takes input but does not declare ValidationError`)
      }
      if (endpoint.params !== undefined && declared(NotFoundError) === -1) {
        problems.push(`${name} has a path id but does not declare NotFoundError`)
      }
      const rule = declared(BusinessRuleError)
      if (rule !== -1 && declared(ValidationError) > rule) {
        problems.push(`${name} declares BusinessRuleError before ValidationError; a client would read every 422 as the former`)
      }
    }
  })
  return problems
}

/** Fails (a defect: nothing to recover) when the contract has problems. */
export const checkContract = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  Effect.suspend(() => {
    const problems = contractProblems(api)
    return problems.length === 0 ? Effect.void : Effect.die(new ContractViolation(problems))
  })
