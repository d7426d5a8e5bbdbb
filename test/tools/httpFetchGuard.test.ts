import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentToolResult } from "@yiem/core";
import { createHttpFetchTool } from "@yiem/tools";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

/** A loopback HTTP server that records every request it gets. */
interface RecordingServer {
  port: number;
  /** `host path` of every request received. */
  hits: string[];
  close(): Promise<void>;
}

/** Starts a recording server on `host` (a loopback address), on `port` or any free one. */
async function startRecordingServer(
  host: string,
  route: (req: IncomingMessage, res: ServerResponse) => void,
  port = 0,
): Promise<RecordingServer> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${host} ${req.url}`);
    route(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const ok = (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("reached");
};

/** The text block of a result. */
function textOf(result: AgentToolResult): string {
  return (result.content[0] as { text: string }).text;
}

const noProgress = (): void => {};

/** httpFetch as a process with `YIEM_HTTP_FETCH_ALLOW` set to `allow` has it. */
function fetchWith(allow: string[]) {
  const tool = createHttpFetchTool({ allow });
  return async (url: string) => tool.execute("call-guard", { url }, undefined, noProgress);
}

describe("httpFetch refuses loopback however the URL spells it", () => {
  // The refused targets: 127.0.0.1 and ::1 on one port, recording whether anything reached them.
  let v4: RecordingServer;
  let v6: RecordingServer;
  // The allowed origin: 127.0.0.2, which redirects to the refused 127.0.0.1.
  let origin: RecordingServer;
  beforeAll(async () => {
    v4 = await startRecordingServer("127.0.0.1", ok);
    v6 = await startRecordingServer("::1", ok, v4.port);
    origin = await startRecordingServer("127.0.0.2", (req, res) => {
      const targets: Record<string, string> = {
        "/to-loopback": `http://127.0.0.1:${v4.port}/target`,
        "/to-mapped": `http://[::ffff:127.0.0.1]:${v4.port}/target`,
        "/to-self": "/final",
        "/loop": "/loop",
      };
      const location = targets[req.url ?? ""];
      if (!location) return ok(req, res);
      res.writeHead(302, { location });
      res.end();
    });
  });
  afterAll(async () => {
    await Promise.all([v4.close(), v6.close(), origin.close()]);
  });
  beforeEach(() => {
    for (const server of [v4, v6, origin]) server.hits.length = 0;
  });

  it("reaches the loopback server when YIEM_HTTP_FETCH_ALLOW allows 127.0.0.1 (the servers record hits)", async () => {
    const result = await fetchWith(["127.0.0.1/32"])(`http://127.0.0.1:${v4.port}/allowed`);
    expect(textOf(result)).toContain("reached");
    expect(v4.hits).toEqual(["127.0.0.1 /allowed"]);
  });

  it.each([
    ["127.0.0.1", "127.0.0.1"],
    ["127.1", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0x7f.0.0.1", "127.0.0.1"],
    ["017700000001", "127.0.0.1"],
    ["127.0.0.1.", "127.0.0.1"],
    ["[::1]", "::1"],
    ["[::ffff:127.0.0.1]", "::ffff:7f00:1"],
    ["localhost", "localhost resolves to"],
  ])("refuses http://%s and sends it nothing", async (host, named) => {
    const url = `http://${host}:${v4.port}/secret`;
    const error = await fetchWith([])(url).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(error).toMatch(/^httpFetch refused http:\/\/.+\/secret: /);
    expect(error).toContain(named);
    expect(error).toMatch(/loopback \((127\.0\.0\.0\/8|::1)\)/);
    expect(error).toContain("YIEM_HTTP_FETCH_ALLOW");
    expect([...v4.hits, ...v6.hits]).toEqual([]);
  });

  it("allows a host by name from YIEM_HTTP_FETCH_ALLOW whatever it resolves to", async () => {
    const result = await fetchWith(["localhost"])(`http://localhost:${v4.port}/named`);
    expect(textOf(result)).toContain("reached");
    expect([...v4.hits, ...v6.hits]).toHaveLength(1);
  });

  it("refuses a redirect from an allowed origin to loopback, before connecting to it", async () => {
    const fetchUrl = fetchWith(["127.0.0.2/32"]);
    const from = `http://127.0.0.2:${origin.port}/to-loopback`;
    await expect(fetchUrl(from)).rejects.toThrow(
      `httpFetch refused http://127.0.0.1:${v4.port}/target (redirected from ${from}): 127.0.0.1: loopback (127.0.0.0/8)`,
    );
    await expect(fetchUrl(`http://127.0.0.2:${origin.port}/to-mapped`)).rejects.toThrow(
      /refused http:\/\/\[::ffff:7f00:1\].*loopback \(127\.0\.0\.0\/8\), as the IPv6 form of 127\.0\.0\.1/,
    );
    expect(origin.hits).toEqual(["127.0.0.2 /to-loopback", "127.0.0.2 /to-mapped"]);
    expect([...v4.hits, ...v6.hits]).toEqual([]);
  });

  it("follows a redirect that stays within what is allowed and reports the final URL", async () => {
    const result = await fetchWith(["127.0.0.2/32"])(`http://127.0.0.2:${origin.port}/to-self`);
    expect(textOf(result)).toContain("reached");
    expect(result.details).toMatchObject({ finalUrl: `http://127.0.0.2:${origin.port}/final` });
  });

  it("gives up after 10 redirects", async () => {
    await expect(
      fetchWith(["127.0.0.2/32"])(`http://127.0.0.2:${origin.port}/loop`),
    ).rejects.toThrow(/httpFetch failed for .*: more than 10 redirects/);
    expect(origin.hits).toHaveLength(11);
  });
});
