/**
 * The contract alone, for clients and embedders: the HttpApi (groups, endpoints, schemas,
 * errors, the middleware declarations) and the typed client, without the server or storage
 * (`Api.ts` names each group's handlers module as a dynamic import that only the server makes).
 */
export { Api } from "./Api.ts"
export * from "./shared/HttpErrors.ts"
export { type Access, type AnyOfScopes, AnyValidKey, Authentication, describeAccess, RequiredAccess, scopesOf } from "./shared/Access.ts"
export { operation, type OperationDoc } from "./shared/Operation.ts"
export { PageQuery, RowId, SortQuery } from "./shared/Params.ts"
export { MemberList, MemberResponse, MembersGroup } from "./members/MembersGroup.ts"
export { ConnectionInfo, MeGroup } from "./me/MeGroup.ts"
export { DealList, DealResponse, DealsGroup } from "./deals/DealsGroup.ts"
export { EventList, EventResponse, EventsGroup, RegistrationList } from "./events/EventsGroup.ts"
export { ContactList, ContactResponse, ContactsGroup, SubscriberCreate } from "./contacts/ContactsGroup.ts"
export { SponsorshipList, SponsorshipsGroup } from "./sponsorships/SponsorshipsGroup.ts"
export { PlacementList, PlacementsGroup } from "./placements/PlacementsGroup.ts"
export { BookingList, BookingsGroup } from "./bookings/BookingsGroup.ts"
export { ChangeEvent, ChangesGroup, ChangesPage } from "./changes/ChangesGroup.ts"
export { type ChamberClient, FetchClientLive, makeClient } from "./Client.ts"
