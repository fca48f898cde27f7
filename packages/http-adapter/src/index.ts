/** @chamber/http-adapter: the contract (also alone as `@chamber/http-adapter/contract`) and the server. */
export * from "./contract.ts"
export { ApiRoutes, HandlersLive, HttpLive, MAX_BODY_BYTES, serveApi } from "./Server.ts"
export { CurrentKey } from "./shared/Access.ts"
export { createServer, NodeServerLive, NodeServerTest, nodeServerTest, type ServerOptions } from "./server/NodeServer.ts"
export { checkContract, ContractViolation, contractProblems } from "./server/ContractCheck.ts"
export { RateLimitPerMinute, rateLimitHeaders } from "./server/RateLimiting.ts"
export { RequestMetricsOn } from "./server/RequestMetrics.ts"
export { IdempotencyRetention } from "./server/Idempotency.ts"
