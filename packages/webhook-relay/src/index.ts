/** @chamber/webhook-relay: signing and sending deliveries, and the relay that claims and records them (docs/webhooks.md). */
export * from "./DeliveryStore.ts"
export * from "./Destination.ts"
export * from "./Relay.ts"
export * from "./Schedule.ts"
export * from "./Sender.ts"
export * from "./Settings.ts"
export * from "./Signature.ts"
export * from "./RelayLive.ts"
