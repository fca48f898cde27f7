/** @chamber/webhook-relay: the parts of delivery that need no database (packages/webhook-relay/README.md). */
export * from "./Destination.ts"
export * from "./Schedule.ts"
export * from "./Sender.ts"
export * from "./Settings.ts"
export * from "./Signature.ts"
