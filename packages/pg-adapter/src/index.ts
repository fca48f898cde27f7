/**
 * @chamber/pg-adapter: migrations, repositories and the database for both runtimes. Adding a
 * resource adds its repository to `RepositoriesLive` and its core service to `ServicesLive`.
 */
import * as Layer from "effect/Layer"
import { Bookings, Contacts, Deals, Events, Hooks, Importer, Invoices, Keys, Members, Payments, Placements, Registrations, Sponsorships, Tenants } from "@chamber/core"
import { type DatabaseConfig, DatabaseLive, type DatabaseOptions } from "./Database.ts"
import { ApiKeyRepoSql } from "./repos/ApiKeyRepoSql.ts"
import { BookingRepoSql } from "./repos/BookingRepoSql.ts"
import { ContactRepoSql } from "./repos/ContactRepoSql.ts"
import { DealRepoSql } from "./repos/DealRepoSql.ts"
import { EventRepoSql } from "./repos/EventRepoSql.ts"
import { HookDeliveryRepoSql } from "./repos/HookDeliveryRepoSql.ts"
import { HookRepoSql } from "./repos/HookRepoSql.ts"
import { IdempotencyRepoSql } from "./repos/IdempotencyRepoSql.ts"
import { InvoiceRepoSql } from "./repos/InvoiceRepoSql.ts"
import { PaymentRepoSql } from "./repos/PaymentRepoSql.ts"
import { RegistrationRepoSql } from "./repos/RegistrationRepoSql.ts"
import { DatabaseFailuresSql } from "./repos/DatabaseFailuresSql.ts"
import { KeyHasherNode, ReadinessSql, TransactorSql } from "./repos/Infrastructure.ts"
import { MemberRepoSql } from "./repos/MemberRepoSql.ts"
import { OutboxSql } from "./repos/OutboxSql.ts"
import { PlacementRepoSql } from "./repos/PlacementRepoSql.ts"
import { RateLimitSnapshotsSql } from "./repos/RateLimitSnapshotsSql.ts"
import { SponsorshipRepoSql } from "./repos/SponsorshipRepoSql.ts"
import { TenantRepoSql } from "./repos/TenantRepoSql.ts"
import { WebhookSecretsNode } from "./repos/WebhookSecretsNode.ts"

export * from "./Database.ts"
export { type EmbeddedDatabase, EmbeddedInUse, embeddedOwner, openEmbedded, socketPath } from "./embedded/EmbeddedDatabase.ts"
export type { PgliteWire } from "./embedded/PgliteWire.ts"
export {
  ApiKeyRepoSql,
  BookingRepoSql,
  ContactRepoSql,
  DatabaseFailuresSql,
  DealRepoSql,
  EventRepoSql,
  HookDeliveryRepoSql,
  HookRepoSql,
  IdempotencyRepoSql,
  InvoiceRepoSql,
  KeyHasherNode,
  MemberRepoSql,
  OutboxSql,
  PaymentRepoSql,
  PlacementRepoSql,
  RateLimitSnapshotsSql,
  RegistrationRepoSql,
  SponsorshipRepoSql,
  TenantRepoSql,
  TransactorSql,
  WebhookSecretsNode
}
export { isSealedWith, type SecretKeys, secretKeyId, webhookSecrets } from "./repos/WebhookSecretsNode.ts"
export { checkStoredSecrets, NoSecretKey, rekeyStoredSecrets, SecretKeyMismatch, surveySecrets } from "./repos/WebhookSecretsSql.ts"

/** Every repository and infrastructure port over the SQL client. */
const RepositoriesLive = Layer.mergeAll(
  TenantRepoSql,
  ApiKeyRepoSql,
  MemberRepoSql,
  ContactRepoSql,
  EventRepoSql,
  RegistrationRepoSql,
  DealRepoSql,
  InvoiceRepoSql,
  PaymentRepoSql,
  SponsorshipRepoSql,
  PlacementRepoSql,
  BookingRepoSql,
  HookRepoSql,
  HookDeliveryRepoSql,
  IdempotencyRepoSql,
  OutboxSql,
  RateLimitSnapshotsSql,
  TransactorSql,
  KeyHasherNode,
  WebhookSecretsNode,
  ReadinessSql,
  DatabaseFailuresSql
)

/** Every core service over the repositories (which stay available too); the importer over them all. */
export const ServicesLive = Importer.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Keys.layer,
      Members.layer,
      Contacts.layer,
      Events.layer,
      Registrations.layer,
      Deals.layer,
      Invoices.layer,
      Payments.layer,
      Sponsorships.layer,
      Placements.layer,
      Bookings.layer,
      Hooks.layer
    )
  ),
  Layer.provideMerge(Tenants.layer),
  Layer.provideMerge(RepositoriesLive)
)

/** Core services plus the database they run on, migrated. */
export const StorageLive = (config: DatabaseConfig, options?: DatabaseOptions) =>
  ServicesLive.pipe(Layer.provideMerge(DatabaseLive(config, options)))
