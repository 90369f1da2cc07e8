import { RestClient, type components, type RestCall } from "@cairn/openapi/rest";

export type Schemas = components["schemas"];
export type Memory = Schemas["Memory"];
export type MemoryBrief = Schemas["MemoryBrief"];
export type Caller = Schemas["Caller"];

export type Call = RestCall;

/** Every call the console makes goes through the contract's REST client, same origin, with the tab's token. */
export const apiFor = (token: string): Call => new RestClient({ token }).call;

/** A memory in a listing is brief unless asked for whole: both carry what a row shows. */
export const isBrief = (m: MemoryBrief | Memory): m is MemoryBrief => "text" in m;
