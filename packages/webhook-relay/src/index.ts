/** @chamber/webhook-relay: signing and sending deliveries, and the relay that claims and records them (docs/webhooks.md). */
export * from "./DeliveryStore.ts"
export * from "./Relay.ts"
export * from "./Signature.ts"
