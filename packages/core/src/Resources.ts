/**
 * Every resource of the API, one `export *` line per file of its folder, and the scopes each
 * declares (`resourceScopes`) in `ResourceScopeList`: adding a resource adds its lines here and
 * nothing to `Scopes.ts` (docs/architecture.md "Adding a resource").
 */
import { BookingScopes } from "./booking/Bookings.ts"
import { ContactScopes } from "./contact/Contact.ts"
import { DealScopes } from "./deal/Deal.ts"
import { EventScopes } from "./event/Event.ts"
import { InvoiceScopes } from "./invoice/Invoice.ts"
import { MemberScopes } from "./member/Member.ts"
import { PaymentScopes } from "./payment/Payment.ts"
import { PlacementScopes } from "./placement/Placements.ts"
import { RegistrationScopes } from "./registration/Registration.ts"
import { SponsorshipScopes } from "./sponsorship/Sponsorships.ts"
import { HookScopes } from "./webhook/Hook.ts"

export * from "./member/Member.ts"
export * from "./member/MemberErrors.ts"
export * from "./member/MemberRepo.ts"
export * from "./member/Members.ts"
export * from "./contact/Contact.ts"
export * from "./contact/ContactErrors.ts"
export * from "./contact/ContactRepo.ts"
export * from "./contact/Contacts.ts"
export * from "./event/Event.ts"
export * from "./event/EventErrors.ts"
export * from "./event/EventRepo.ts"
export * from "./event/Events.ts"
export * from "./registration/Registration.ts"
export * from "./registration/RegistrationRepo.ts"
export * from "./registration/Registrations.ts"
export * from "./deal/Deal.ts"
export * from "./deal/DealErrors.ts"
export * from "./deal/DealRepo.ts"
export * from "./deal/Deals.ts"
export * from "./sponsorship/Sponsorships.ts"
export * from "./placement/Placements.ts"
export * from "./booking/Bookings.ts"
export * from "./invoice/Invoice.ts"
export * from "./invoice/InvoiceErrors.ts"
export * from "./invoice/InvoiceRepo.ts"
export * from "./invoice/Invoices.ts"
export * from "./payment/Payment.ts"
export * from "./payment/PaymentErrors.ts"
export * from "./payment/PaymentRepo.ts"
export * from "./payment/Payments.ts"
export * from "./webhook/Hook.ts"
export * from "./webhook/HookErrors.ts"
export * from "./webhook/HookRepo.ts"
export * from "./webhook/Hooks.ts"
export * from "./webhook/AddressRanges.ts"
export * from "./webhook/HookActions.ts"
export * from "./webhook/HookDelivery.ts"
export * from "./webhook/HookPinger.ts"
export * from "./webhook/HookPings.ts"
export * from "./webhook/DeliveryStore.ts"
export * from "./webhook/WebhookAdmin.ts"

/**
 * Every resource's scopes, in the order lists that show scopes keep (the spec's table, docs/api.md
 * "Authentication and scopes"). `Scopes.ts` does not compile while a declaration exported above
 * is missing here.
 */
export const ResourceScopeList = [
  MemberScopes,
  ContactScopes,
  EventScopes,
  RegistrationScopes,
  DealScopes,
  InvoiceScopes,
  PaymentScopes,
  SponsorshipScopes,
  PlacementScopes,
  BookingScopes,
  HookScopes
] as const
