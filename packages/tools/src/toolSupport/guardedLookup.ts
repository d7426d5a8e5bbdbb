import { promises as dns, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { YiemError } from "@yiem/core";
import { checkFetchAddress, type FetchAllowList, isAllowedHost } from "./addressPolicy.js";

/** Resolves a host name to every address it has (as `dns.promises.lookup` with `all: true`). */
export type AddressResolver = (hostname: string, family: number) => Promise<LookupAddress[]>;

/** The system resolver, as `net.connect` would use it. */
const systemResolver: AddressResolver = (hostname, family) =>
  dns.lookup(hostname, { all: true, family });

/**
 * A fetch the guard refused: the message names the target, the address and the rule
 * (`localhost resolves to 127.0.0.1: loopback (127.0.0.0/8)`). Terminal.
 */
export class FetchRefusedError extends YiemError {
  override name = "FetchRefusedError";
}

/**
 * Resolves `hostname` and returns its addresses, or throws `FetchRefusedError` when any of
 * them is refused (a name allowed by the list passes whatever it resolves to).
 *
 * @example await resolveCheckedAddresses("localhost", 0, NO_FETCH_ALLOWANCES) // throws
 */
export async function resolveCheckedAddresses(
  hostname: string,
  family: number,
  allow: FetchAllowList,
  resolve: AddressResolver = systemResolver,
): Promise<LookupAddress[]> {
  const addresses = await resolve(hostname, family);
  if (addresses.length === 0) throw new Error(`${hostname} has no address`);
  if (isAllowedHost(hostname, allow)) return addresses;
  for (const { address } of addresses) {
    const refusal = checkFetchAddress(address, allow);
    if (refusal) throw new FetchRefusedError(`${hostname} resolves to ${address}: ${refusal.rule}`);
  }
  return addresses;
}

/** `4`, `6` or `0` (either) from a lookup's `family` option. */
function familyNumber(family: number | "IPv4" | "IPv6" | undefined): number {
  if (family === "IPv4") return 4;
  if (family === "IPv6") return 6;
  return family ?? 0;
}

/**
 * A `lookup` for `net.connect` / `tls.connect` (an http Agent's or undici's `connect`
 * option) that resolves with `resolve` and refuses, with `FetchRefusedError`, a name any of
 * whose addresses the allow list does not permit. The check runs on the very addresses the
 * socket then connects to, so a name that resolves to a public address first and a private
 * one later (DNS rebinding) gains nothing. Node calls no lookup for an IP literal: check
 * those with `checkFetchAddress` before connecting.
 *
 * @example new Agent({ connect: { lookup: createGuardedLookup(allow) } })
 */
export function createGuardedLookup(
  allow: FetchAllowList,
  resolve: AddressResolver = systemResolver,
): LookupFunction {
  return (hostname, options, callback) => {
    resolveCheckedAddresses(hostname, familyNumber(options.family), allow, resolve).then(
      (addresses) => {
        if (options.all) return callback(null, addresses);
        const [first] = addresses as [LookupAddress];
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}
