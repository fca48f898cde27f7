/**
 * @chamber/pg-adapter: migrations, repositories and the database for both runtimes. Adding a
 * resource adds one line to `Resources`: its repository and its core service.
 */
import * as Layer from "effect/Layer"
import { Bookings, Changes, Contacts, Deals, Events, Exporter, Hooks, Importer, Invoices, Keys, Members, Payments, Placements, Registrations, Sponsorships, TenantRemoval, Tenants } from "@chamber/core"
import { type DatabaseConfig, DatabaseLive, type DatabaseOptions } from "./Database.ts"
import { ApiKeyRepoSql } from "./repos/ApiKeyRepoSql.ts"
import { BookingRepoSql } from "./repos/BookingRepoSql.ts"
import { ChangeLogSql } from "./repos/ChangeLogSql.ts"
import { ContactRepoSql } from "./repos/ContactRepoSql.ts"
import { DealRepoSql } from "./repos/DealRepoSql.ts"
import { DeliveryStoreSql } from "./repos/DeliveryStoreSql.ts"
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
import { ImportBatchesSql } from "./repos/ImportBatchesSql.ts"
import { ImportHoldsSql } from "./repos/ImportHoldsSql.ts"
import { OutboxSql } from "./repos/OutboxSql.ts"
import { PlacementRepoSql } from "./repos/PlacementRepoSql.ts"
import { RateLimitSnapshotsSql } from "./repos/RateLimitSnapshotsSql.ts"
import { SponsorshipRepoSql } from "./repos/SponsorshipRepoSql.ts"
import { TenantRemovalSql } from "./repos/TenantRemovalSql.ts"
import { ExportRepoSql } from "./repos/ExportRepoSql.ts"
import { TenantRepoSql } from "./repos/TenantRepoSql.ts"
import { WebhookAdminSql } from "./repos/WebhookAdminSql.ts"
import { WebhookSecretsNode } from "./repos/WebhookSecretsNode.ts"

export * from "./Database.ts"
export { isoColumn } from "./repos/IsoColumn.ts"
export { ImportSlices } from "./repos/HeldRows.ts"
export { type EmbeddedDatabase, EmbeddedInUse, embeddedOwner, openEmbedded, socketPath } from "./embedded/EmbeddedDatabase.ts"
export type { PgliteWire } from "./embedded/PgliteWire.ts"
export {
  ApiKeyRepoSql,
  BookingRepoSql,
  ChangeLogSql,
  ContactRepoSql,
  DatabaseFailuresSql,
  DealRepoSql,
  DeliveryStoreSql,
  EventRepoSql,
  HookDeliveryRepoSql,
  HookRepoSql,
  IdempotencyRepoSql,
  InvoiceRepoSql,
  KeyHasherNode,
  MemberRepoSql,
  OutboxSql,
  ImportBatchesSql,
  ImportHoldsSql,
  PaymentRepoSql,
  PlacementRepoSql,
  RateLimitSnapshotsSql,
  RegistrationRepoSql,
  SponsorshipRepoSql,
  TenantRemovalSql,
  TenantRepoSql,
  TransactorSql,
  WebhookAdminSql,
  WebhookSecretsNode
}
export { isSealedWith, type SecretKeys, secretKeyId, webhookSecrets } from "./repos/WebhookSecretsNode.ts"
export { NoSecretKey, rekeyStoredSecrets, type SecretsRekeyed } from "./repos/SecretsRekey.ts"
export { checkStoredSecrets, SecretKeyMismatch, surveySecrets } from "./repos/WebhookSecretsSql.ts"

/**
 * Every resource, one line each: its SQL repository and its core service. A service is given
 * every repository (a registration checks its member and contact), and one whose repository no
 * line gives does not compile (`StorageLive` needs nothing more).
 */
const Resources = [
  [ApiKeyRepoSql, Keys.layer],
  [MemberRepoSql, Members.layer],
  [ContactRepoSql, Contacts.layer],
  [EventRepoSql, Events.layer],
  [RegistrationRepoSql, Registrations.layer],
  [DealRepoSql, Deals.layer],
  [InvoiceRepoSql, Invoices.layer],
  [PaymentRepoSql, Payments.layer],
  [SponsorshipRepoSql, Sponsorships.layer],
  [PlacementRepoSql, Placements.layer],
  [BookingRepoSql, Bookings.layer],
  [HookRepoSql, Hooks.layer],
  [ChangeLogSql, Changes.layer]
] as const

type AnyLayer = Layer.Layer<never, any, any>

/** The layers merged into one; the list is never empty, so the tuple type `mergeAll` asks for holds. */
const mergeAll = <L extends AnyLayer>(layers: ReadonlyArray<L>) => Layer.mergeAll(...(layers as unknown as [L, ...Array<L>]))

/** Every repository and infrastructure port over the SQL client. */
const RepositoriesLive = Layer.mergeAll(
  mergeAll(Resources.map(([repository]) => repository)),
  TenantRepoSql,
  TenantRemovalSql,
  ExportRepoSql,
  HookDeliveryRepoSql,
  IdempotencyRepoSql,
  OutboxSql,
  ImportBatchesSql,
  ImportHoldsSql,
  RateLimitSnapshotsSql,
  TransactorSql,
  KeyHasherNode,
  WebhookSecretsNode,
  ReadinessSql,
  DatabaseFailuresSql
)

/** Every core service over the repositories (which stay available too); the importer over them all. */
export const ServicesLive = Layer.merge(Importer.layer, Exporter.layer).pipe(
  Layer.provideMerge(mergeAll(Resources.map(([, service]) => service))),
  Layer.provideMerge(Layer.merge(Tenants.layer, TenantRemoval.layer)),
  Layer.provideMerge(RepositoriesLive)
)

/** A layer that needs nothing more: a service left without its repository is a type error here. */
const needingNothing = <A, E>(layer: Layer.Layer<A, E, never>) => layer

/** Core services plus the database they run on, migrated. */
export const StorageLive = (config: DatabaseConfig, options?: DatabaseOptions) =>
  needingNothing(ServicesLive.pipe(Layer.provideMerge(DatabaseLive(config, options))))
