/** @chamber/http-adapter: the HttpApi contract, its handlers, the server and a typed client. */
export { Api } from "./Api.ts"
export * from "./shared/HttpErrors.ts"
export { Authentication, CurrentKey, RequiredScope } from "./shared/Authentication.ts"
export { MembersGroup, MemberResponse, MemberList } from "./members/MembersGroup.ts"
export { MeGroup, ConnectionInfo } from "./me/MeGroup.ts"
export { ApiRoutes, HandlersLive, HttpLive, JsonErrors, MAX_BODY_BYTES } from "./Server.ts"
export { type ChamberClient, FetchClientLive, makeClient } from "./Client.ts"
