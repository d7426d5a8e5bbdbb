import type { LookupAddress } from "node:dns";
import {
  type AddressResolver,
  checkFetchAddress,
  createGuardedLookup,
  describeRefusedAddress,
  FetchRefusedError,
  NO_FETCH_ALLOWANCES,
  parseFetchAllowList,
} from "@yiem/tools";
import { describe, expect, it } from "vitest";

// These tests only classify addresses and call the lookup hook with a fake resolver: nothing
// here opens a socket, so a broken guard can never send traffic anywhere.

describe("the addresses httpFetch refuses", () => {
  it.each([
    ["10.0.0.1", /^private/],
    ["172.16.5.4", /^private/],
    ["172.31.255.255", /^private/],
    ["192.168.1.1", /^private/],
    ["100.64.0.1", /^carrier-grade NAT \(100\.64\.0\.0\/10\)/],
    ["169.254.1.1", /^link-local \(169\.254\.0\.0\/16\)/],
    ["169.254.169.254", /^cloud metadata \(169\.254\.169\.254\)/],
    ["fe80::1", /^link-local \(fe80::\/10\)/],
    ["fc00::1", /^unique-local \(fc00::\/7\)/],
    ["fd12:3456::1", /^unique-local/],
    ["fd00:ec2::254", /^cloud metadata \(fd00:ec2::254\)/],
    ["0.0.0.0", /^unspecified/],
    ["::", /^unspecified \(::\)/],
    ["127.8.9.10", /^loopback/],
    ["::1", /^loopback \(::1\)/],
    ["224.0.0.1", /^multicast/],
    ["ff02::1", /^multicast/],
    ["255.255.255.255", /^broadcast/],
    ["240.0.0.1", /^reserved/],
    ["192.0.2.1", /^reserved/],
    ["2001:db8::1", /^special-purpose IPv6|^reserved/],
    ["2002:7f00:1::", /^special-purpose IPv6 \(6to4\)/],
    ["::ffff:10.0.0.1", /^private .*, as the IPv6 form of 10\.0\.0\.1/],
    ["::ffff:169.254.169.254", /^cloud metadata/],
    ["64:ff9b::a9fe:a9fe", /^cloud metadata \(169\.254\.169\.254\), as the IPv6 form/],
    ["64:ff9b::7f00:1", /^loopback/],
    ["64:ff9b:1::1", /^special-purpose IPv6 \(rfc6052\)/],
    ["::7f00:1", /^IPv4-compatible/],
    ["[::1]", /^loopback/],
    ["not-an-address", /^not an IP address/],
  ])("refuses %s", (address, rule) => {
    const refusal = describeRefusedAddress(address);
    expect(refusal?.address).toBe(address);
    expect(refusal?.rule).toMatch(rule);
  });

  it.each([
    "8.8.8.8",
    "93.184.215.14",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700:4700::1111",
    "64:ff9b::808:808",
    "::ffff:8.8.8.8",
  ])("lets public unicast %s through", (address) => {
    expect(describeRefusedAddress(address)).toBeUndefined();
  });

  it("allows what the allow list's ranges hold, IPv4-mapped forms included, and nothing else", () => {
    const allow = parseFetchAllowList(["10.0.0.0/8", "fd00::/8", "127.0.0.2"]);
    expect(checkFetchAddress("10.2.3.4", allow)).toBeUndefined();
    expect(checkFetchAddress("::ffff:10.2.3.4", allow)).toBeUndefined();
    expect(checkFetchAddress("fd00:ec2::254", allow)).toBeUndefined();
    expect(checkFetchAddress("127.0.0.2", allow)).toBeUndefined();
    expect(checkFetchAddress("127.0.0.1", allow)?.rule).toMatch(/^loopback/);
    expect(checkFetchAddress("192.168.0.1", allow)?.rule).toMatch(/^private/);
    expect(checkFetchAddress("169.254.169.254", allow)?.rule).toMatch(/^cloud metadata/);
  });

  it("reads host names, addresses and CIDR ranges, and names a bad entry", () => {
    const allow = parseFetchAllowList([" Internal.Example ", "[::1]", "192.168.0.0/16", ""]);
    expect([...allow.hosts]).toEqual(["internal.example"]);
    expect(allow.ranges.map(([base, bits]) => `${base}/${bits}`)).toEqual([
      "::1/128",
      "192.168.0.0/16",
    ]);
    for (const bad of ["10.0.0.0/33", "http://x.example", "a b", "x.example:8080"]) {
      expect(() => parseFetchAllowList([bad])).toThrow(`YIEM_HTTP_FETCH_ALLOW: "${bad}"`);
    }
  });
});

/** A resolver that answers from `table` and records the names it was asked. */
function fakeResolver(table: Record<string, string[][]>): AddressResolver & { asked: string[] } {
  const asked: string[] = [];
  const answers = new Map(Object.entries(table).map(([name, rounds]) => [name, [...rounds]]));
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    asked.push(hostname);
    const rounds = answers.get(hostname) ?? [];
    const round = rounds.length > 1 ? rounds.shift() : rounds[0];
    return (round ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

type LookupOutcome = { error: Error } | { addresses: unknown; family?: number };

/** Calls the lookup as `net.connect` would (`all` as Node's family autoselection asks). */
function lookUp(
  lookup: ReturnType<typeof createGuardedLookup>,
  hostname: string,
  all: boolean,
): Promise<LookupOutcome> {
  return new Promise((resolve) => {
    lookup(hostname, { all }, (err, addresses, family) =>
      resolve(err ? { error: err } : { addresses, family }),
    );
  });
}

describe("httpFetch's lookup hook checks the addresses a name resolves to", () => {
  const resolver = fakeResolver({
    "metadata.google.internal": [["169.254.169.254"]],
    "mixed.example": [["93.184.215.14", "10.0.0.7"]],
    "public.example": [["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]],
    "internal.example": [["10.0.0.5"]],
    "ranged.example": [["10.1.2.3"]],
    "rebind.example": [["93.184.215.14"], ["127.0.0.1"]],
    "v6private.example": [["fd00::5"]],
  });

  it("refuses metadata.google.internal, which resolves to the metadata address", async () => {
    const outcome = await lookUp(
      createGuardedLookup(NO_FETCH_ALLOWANCES, resolver),
      "metadata.google.internal",
      true,
    );
    expect("error" in outcome && outcome.error).toBeInstanceOf(FetchRefusedError);
    expect("error" in outcome && outcome.error.message).toBe(
      "metadata.google.internal resolves to 169.254.169.254: cloud metadata (169.254.169.254)",
    );
  });

  it("refuses a name when any one of its addresses is private or unique-local", async () => {
    const lookup = createGuardedLookup(NO_FETCH_ALLOWANCES, resolver);
    const mixed = await lookUp(lookup, "mixed.example", true);
    expect("error" in mixed && mixed.error.message).toMatch(/resolves to 10\.0\.0\.7: private/);
    const v6 = await lookUp(lookup, "v6private.example", false);
    expect("error" in v6 && v6.error.message).toMatch(/resolves to fd00::5: unique-local/);
  });

  it("hands a public name's addresses on in the shape net.connect asked for", async () => {
    const lookup = createGuardedLookup(NO_FETCH_ALLOWANCES, resolver);
    expect(await lookUp(lookup, "public.example", true)).toEqual({
      addresses: [
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
      ],
      family: undefined,
    });
    expect(await lookUp(lookup, "public.example", false)).toEqual({
      addresses: "93.184.215.14",
      family: 4,
    });
  });

  it("lets an allowed host name or range through", async () => {
    const lookup = createGuardedLookup(
      parseFetchAllowList(["internal.example", "10.1.0.0/16"]),
      resolver,
    );
    expect(await lookUp(lookup, "internal.example", false)).toMatchObject({
      addresses: "10.0.0.5",
    });
    expect(await lookUp(lookup, "ranged.example", false)).toMatchObject({ addresses: "10.1.2.3" });
    const other = await lookUp(lookup, "mixed.example", false);
    expect("error" in other).toBe(true);
  });

  it("checks every resolution, so a name that rebinds to loopback is refused the second time", async () => {
    const lookup = createGuardedLookup(NO_FETCH_ALLOWANCES, resolver);
    expect(await lookUp(lookup, "rebind.example", false)).toMatchObject({
      addresses: "93.184.215.14",
    });
    const second = await lookUp(lookup, "rebind.example", false);
    expect("error" in second && second.error.message).toMatch(/resolves to 127\.0\.0\.1: loopback/);
    expect(resolver.asked.filter((name) => name === "rebind.example")).toHaveLength(2);
  });
});
