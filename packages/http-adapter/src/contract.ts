/**
 * The contract alone, for clients and embedders: the HttpApi (groups, endpoints, schemas,
 * errors) and the typed client, without the server or the storage it needs.
 */
export { Api } from "./Api.ts"
export * from "./shared/HttpErrors.ts"
export { Authentication, RequiredScope } from "./shared/Authentication.ts"
export { MembersGroup, MemberResponse, MemberList } from "./members/MembersGroup.ts"
export { MeGroup, ConnectionInfo } from "./me/MeGroup.ts"
export { type ChamberClient, FetchClientLive, makeClient } from "./Client.ts"
