/**
 * @chamber/pg-adapter: migrations, repositories and the database for both runtimes. Adding a
 * resource adds one line to `ServicesLive`: its core service over its SQL repository.
 */
import { Layer } from "effect"
import { Contacts, Events, Keys, Members, Tenants } from "@chamber/core"
import { type DatabaseConfig, DatabaseLive, type DatabaseOptions } from "./Database.ts"
import { ApiKeyRepoSql } from "./repos/ApiKeyRepoSql.ts"
import { ContactRepoSql } from "./repos/ContactRepoSql.ts"
import { EventRepoSql } from "./repos/EventRepoSql.ts"
import { KeyHasherNode, ReadinessSql, TransactorSql } from "./repos/Infrastructure.ts"
import { MemberRepoSql } from "./repos/MemberRepoSql.ts"
import { OutboxSql } from "./repos/OutboxSql.ts"
import { TenantRepoSql } from "./repos/TenantRepoSql.ts"

export * from "./Database.ts"
export { EmbeddedInUse, embeddedOwner, openEmbedded, socketPath } from "./embedded/EmbeddedDatabase.ts"
export type { PgliteWire } from "./embedded/PgliteWire.ts"
export { ApiKeyRepoSql, ContactRepoSql, EventRepoSql, KeyHasherNode, MemberRepoSql, OutboxSql, TenantRepoSql, TransactorSql }

/** The ports every service may use. */
const InfrastructureLive = Layer.mergeAll(OutboxSql, TransactorSql, KeyHasherNode, ReadinessSql)

const TenantsLive = Tenants.layer.pipe(Layer.provideMerge(TenantRepoSql))

/** Each core service over its repository; the repositories stay available too. */
export const ServicesLive = Layer.mergeAll(
  Keys.layer.pipe(Layer.provideMerge(ApiKeyRepoSql)),
  Members.layer.pipe(Layer.provideMerge(MemberRepoSql)),
  Contacts.layer.pipe(Layer.provideMerge(ContactRepoSql)),
  Events.layer.pipe(Layer.provideMerge(EventRepoSql))
).pipe(Layer.provideMerge(TenantsLive), Layer.provideMerge(InfrastructureLive))

/** Core services plus the database they run on, migrated. */
export const StorageLive = (config: DatabaseConfig, options?: DatabaseOptions) =>
  ServicesLive.pipe(Layer.provideMerge(DatabaseLive(config, options)))
