/** @chamber/redis-adapter: the rate-limit store shared by every API instance (docs/operations.md). */
export * from "./RedisRateLimitStore.ts"
export * from "./ChamberCounts.ts"
