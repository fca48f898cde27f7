/** The Redis rate-limit store against the store contract, on the Redis server of REDIS_URL (CI: it must be there). */
import { rateLimitContract } from "@chamber/core/test/rate-limit-contract"
import { RedisRateLimitStore } from "../src/index.ts"

export const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379"

rateLimitContract("Redis", RedisRateLimitStore({ url: REDIS_URL, clock: "caller", failOpen: false, timeoutMs: 5_000 }))
