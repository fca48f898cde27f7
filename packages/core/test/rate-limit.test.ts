/** The in-process rate-limit store against the store contract. */
import { MemoryRateLimitStore } from "../src/index.ts"
import { rateLimitContract } from "./rateLimitContract.ts"

rateLimitContract("in-process", MemoryRateLimitStore)
