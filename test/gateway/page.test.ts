/**
 * The gateway's page (`GET /`) in real headless Chromium (Debian's `chromium`, driven by
 * playwright-core) against a real cluster: Redis, a coordinator, two workers, the scripted
 * model and a gateway with a keys file. The page is used as a person would: a key typed in,
 * a message sent; the tests read what it shows. Skipped, with a warning, only where
 * `/usr/bin/chromium` is missing (`.ci/run` installs it). With `YIEM_PAGE_SCREENSHOT=<file>`
 * the approval scenario also saves a screenshot of the page there (how
 * `docs/gateway-page.png` is made).
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { HttpAgent } from "@ag-ui/client";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import OpenAI from "openai";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { keyedFetch, text, userMessage } from "./a2aSupport.js";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  startGatewayProcess,
  type Wire,
  writeKeysFile,
} from "./support.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(
    `test/gateway/page.test.ts: SKIPPED, no Chromium at ${CHROMIUM} (apt-get install -y chromium)`,
  );
}

/** The answer `long` streams, in 30 pieces 200 ms apart: long enough to reload the page in the middle. */
const LONG_ANSWER =
  "The tide comes in twice a day, pulled by the moon and a little by the sun; sailors have " +
  "counted on it for as long as there were boats, and harbour clocks still show it.";

/** An answer that would run script if a page wrote it as HTML. */
const MARKUP_ANSWER = '<img src="/nothing" onerror="document.title=\'pwned\'"><b>bold</b>';

/**
 * The model: `pair` calls `sleepFor` twice in one parallel batch (`first` 1.5 s, then `second`
 * 300 ms, so they end in the other order); `approve <x>` calls `ledgerApproval` (which waits
 * for a decision); `long` streams `LONG_ANSWER`; after tool results it answers
 * `done: <results>`; `markup` answers `MARKUP_ANSWER`.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const text = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  const [verb = "", arg = "x"] = text.split(" ");
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: `done: ${results.join(" | ")}`, textChunks: 4, chunkDelayMs: 30 };
  }
  if (verb === "pair") {
    return {
      kind: "toolCalls",
      calls: [
        { id: "first", name: "sleepFor", arguments: { ms: 1500, label: "first" } },
        { id: "second", name: "sleepFor", arguments: { ms: 300, label: "second" } },
      ],
    };
  }
  if (verb === "approve") {
    return {
      kind: "toolCalls",
      calls: [{ id: `call-${arg}`, name: "ledgerApproval", arguments: { label: arg } }],
    };
  }
  if (verb === "markup") return { kind: "text", text: MARKUP_ANSWER };
  if (verb === "long") {
    return { kind: "text", text: LONG_ANSWER, textChunks: 30, chunkDelayMs: 200 };
  }
  return { kind: "text", text: `hi ${arg}` };
}

const tester = makeKey("page-tester", { scopes: ["submit", "read", "approve"] });

describe.skipIf(!hasChromium)("the gateway's page in headless Chromium", () => {
  let dir: string;
  let browserStart: Promise<BrowserContext> | undefined;
  // Chromium starts while the cluster does.
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "yiem-page-"));
    browserStart = launchChromium(join(dir, "chromium-profile"));
    browserStart.catch(() => undefined); // awaited, and so reported, below
  });
  const cluster = useTestCluster({
    workers: 2,
    model: { respond },
    // A shared provider limit the runs stay well under: the page shows its load.
    coordinatorEnv: { YIEM_MODEL_LIMITS: JSON.stringify({ "scripted-model": { requests: 1000 } }) },
  });
  let gateway: GatewayProcess;
  let context: BrowserContext;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const keysFile = join(dir, "keys.jsonl");
    await writeKeysFile(keysFile, [tester]);
    gateway = await startGatewayProcess(
      { ...cluster.env, YIEM_API_KEYS: keysFile },
      {},
      { compiled: true },
    );
    context = await (browserStart as Promise<BrowserContext>);
  }, 90_000);

  afterAll(async () => {
    const browser = context ?? (await browserStart?.catch(() => undefined));
    await browser?.close();
    await gateway?.process.stop(3000);
    if (dir) await rm(dir, { recursive: true, force: true });
    expect(pageErrors).toEqual([]);
  });

  /** A new tab on the page, signed in with the tester's key; console errors are collected. */
  async function openPage(): Promise<Page> {
    const page = await context.newPage();
    page.on("console", (message) => {
      // A refused request (the 401 before a key is entered) is the page's to show, not an error of it.
      const text = message.text();
      if (message.type() === "error" && !text.startsWith("Failed to load resource"))
        pageErrors.push(text);
    });
    page.on("pageerror", (err) => pageErrors.push(err.message));
    await page.goto(gateway.url);
    await page.fill("#key", tester.secret);
    await page.click("#key-form button[type=submit]");
    await page.locator("#agent option").first().waitFor({ state: "attached", timeout: 15_000 });
    return page;
  }

  async function send(page: Page, text: string): Promise<void> {
    await page.fill("#input", text);
    await page.press("#input", "Enter");
  }

  /** The text of the last answer, once it stopped streaming. */
  async function finalAnswer(page: Page, containing: string): Promise<string> {
    const answer = page.locator("#chat li.assistant:not(.streaming)", { hasText: containing });
    await answer.first().waitFor({ timeout: 20_000 });
    return (await answer.first().textContent()) ?? "";
  }

  it("serves the page with its security headers and no inline script", async () => {
    const response = await fetch(`${gateway.url}/`);
    const html = await response.text();
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(response.status).toBe(200);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    const script = await fetch(`${gateway.url}/page/app.js`);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(script.headers.get("content-security-policy")).toBe(csp);
    for (const path of [
      "/page/..%2Fsrc%2Fmain.ts",
      "/page/nothing.js",
      "/page/..%2F..%2Fpackage.json",
    ]) {
      expect((await fetch(`${gateway.url}${path}`)).status).toBe(404);
    }
    const noKey = await callGateway(gateway.url, undefined, "GET", "/v1/sessions");
    expect(noKey.status).toBe(401);
  });

  it("shows two parallel tool calls live, with their workers and durations, on the timeline in call order", async () => {
    const page = await openPage();
    await send(page, "pair");
    // Live: the long call shows running, in the chat and as a growing bar, before it ends.
    await page.locator("#chat li.tool[data-tool-call-id=first][data-state=running]").waitFor({
      timeout: 20_000,
    });
    await page.locator("#timeline g[data-id=first][data-running=true]").waitFor({
      timeout: 5_000,
    });
    expect(await finalAnswer(page, "done:")).toBe("done: first done | second done");
    const bars = page.locator("#timeline g[data-kind=tool]");
    await expect.poll(() => bars.count(), { timeout: 15_000 }).toBe(2);
    const drawn = await bars.evaluateAll((nodes) =>
      nodes.map((node) => ({
        ...(node as unknown as { dataset: Record<string, string> }).dataset,
      })),
    );
    expect(drawn.map((bar) => bar.id)).toEqual(["first", "second"]);
    expect(drawn.map((bar) => bar.order)).toEqual(["0", "1"]);
    expect(Number(drawn[0]?.start)).toBeLessThanOrEqual(Number(drawn[1]?.start));
    expect(Number(drawn[0]?.ms)).toBeGreaterThan(Number(drawn[1]?.ms));
    // They ran at once: each on its own row, even when one worker ran both.
    expect(drawn[0]?.row).not.toBe(drawn[1]?.row);
    const workers = new Set(["worker-1", "worker-2"]);
    for (const bar of drawn) {
      expect(bar.running).toBe("false");
      expect(workers.has(bar.lane ?? "")).toBe(true);
    }
    const lanes = await page.locator("#timeline text.lane-label").allTextContents();
    expect(lanes[0]).toBe("model");
    expect(lanes.slice(1).every((lane) => workers.has(lane))).toBe(true);
    expect(await page.locator("#timeline g[data-kind=model]").count()).toBe(2);
    for (const id of ["first", "second"]) {
      const card = page.locator(`#chat li.tool[data-tool-call-id=${id}]`);
      expect(await card.getAttribute("data-state")).toBe("done");
      expect(workers.has((await card.getAttribute("data-worker")) ?? "")).toBe(true);
      expect(await card.locator(".duration").textContent()).toMatch(/^ in \d+ ms$/);
    }
    await page.close();
  });

  it("shows the shared provider limit's load: the requests of its last window and the calls waiting", async () => {
    const page = await openPage();
    await send(page, "hi limits");
    await finalAnswer(page, "hi limits");
    const limit = page.locator('#limits li[data-limit="scripted-model"]');
    await expect
      .poll(async () => (await limit.textContent({ timeout: 10_000 })) ?? "", { timeout: 15_000 })
      .toMatch(/scripted-model [1-9]\d*\/1000 requests, \d+ tokens per 60 s0 waiting/);
    await page.close();
  });

  it("grants an approval from the page, and the run finishes; denies another", async () => {
    const page = await openPage();
    await send(page, "approve a1");
    const card = page.locator("#chat li.tool[data-tool-call-id=call-a1]");
    await card.locator("button.approve").waitFor({ timeout: 20_000 });
    expect(await card.getAttribute("data-state")).toBe("awaiting");
    await expect
      .poll(() => page.locator("#approvals li[data-call-key=call-a1]").count(), {
        timeout: 15_000,
      })
      .toBe(1);
    await card.locator("button.approve").click();
    expect(await finalAnswer(page, "done:")).toBe("done: a1 recorded");
    expect(await card.getAttribute("data-state")).toBe("done");
    expect(await card.textContent()).toContain("decided by page-tester");
    // Its duration counts from the approval; the wait for it is shown apart.
    expect(await card.locator(".duration").textContent()).toMatch(/^ in \d+ ms$/);
    expect(await card.locator(".wait").textContent()).toMatch(
      /^ \(after \d+ ms awaiting approval\)$/,
    );
    await expect.poll(() => page.locator("#approvals li").count(), { timeout: 15_000 }).toBe(0);
    await send(page, "approve d1");
    const denied = page.locator("#chat li.tool[data-tool-call-id=call-d1]");
    await denied.locator("button.deny").click({ timeout: 20_000 });
    await expect.poll(() => denied.getAttribute("data-state"), { timeout: 20_000 }).toBe("denied");
    expect(await finalAnswer(page, "done: a1 recorded |")).toMatch(/^done: a1 recorded \| /);
    expect(await denied.textContent()).not.toContain("d1 recorded");
    if (process.env.YIEM_PAGE_SCREENSHOT) {
      await send(page, "pair");
      await finalAnswer(page, "first done | second done");
      await page.screenshot({ path: process.env.YIEM_PAGE_SCREENSHOT, fullPage: true });
    }
    await page.close();
  });

  it("asks for a key before anything, showing no 401", async () => {
    const page = await context.newPage();
    await page.goto(gateway.url);
    const status = page.locator("#status");
    await expect
      .poll(() => status.textContent(), { timeout: 15_000 })
      .toMatch(/enter your API key/);
    expect(await status.textContent()).not.toContain("401");
    expect(await status.evaluate((node) => node.classList.contains("error"))).toBe(false);
    await page.close();
  });

  it("lists no session for a request the coordinators refused", async () => {
    const refused = await callGateway(gateway.url, tester.secret, "POST", "/v1/runs", {
      body: { input: "hello", agent: "no-such-agent" },
    });
    expect(refused.status).toBe(202);
    const { runId, sessionId } = refused.body;
    await expect
      .poll(
        async () =>
          (await callGateway(gateway.url, tester.secret, "GET", `/v1/runs/${runId}`)).body.status,
        {
          timeout: 20_000,
        },
      )
      .toBe("failed");
    const listed = await callGateway(gateway.url, tester.secret, "GET", "/v1/sessions");
    expect(listed.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(
      sessionId,
    );
    const page = await openPage();
    await send(page, "hello listed");
    await finalAnswer(page, "hi listed");
    const entries = page.locator("#sessions li");
    await expect.poll(() => entries.count(), { timeout: 15_000 }).toBeGreaterThan(0);
    const shown = await entries.evaluateAll((nodes) =>
      nodes.map(
        (node) => (node as unknown as { dataset: Record<string, string> }).dataset.sessionId,
      ),
    );
    expect(shown).not.toContain(sessionId);
    expect(await page.locator("#sessions").textContent()).not.toContain("? ·");
    await page.close();
  });

  /**
   * One run through each face with its own client (`hello <face>`, answered `hi <face>`):
   * Open Responses and chat completions (`openai`), A2A (`@a2a-js/sdk`), AG-UI
   * (`@ag-ui/client`) and MCP (`@modelcontextprotocol/sdk`). Resolves the faces' names.
   */
  async function runFromEveryFace(): Promise<string[]> {
    const auth = `Bearer ${tester.secret}`;
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: tester.secret });
    await openai.responses.create({ model: "default", input: "hello responses" });
    await openai.chat.completions.create({
      model: "default",
      messages: [{ role: "user", content: "hello completions" }],
    });
    const fetchImpl = keyedFetch(tester);
    const a2a = await new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }).createFromUrl(gateway.url);
    await a2a.sendMessage(userMessage([text("hello a2a")]));
    const agui = new HttpAgent({
      url: `${gateway.url}/v1/agui`,
      headers: { authorization: auth },
      threadId: randomUUID(),
      initialMessages: [{ id: randomUUID(), role: "user", content: "hello agui" }],
    });
    await agui.runAgent({ runId: randomUUID() });
    const mcp = new McpClient({ name: "page-test", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { Authorization: auth } },
      }),
    );
    const [tool] = (await mcp.listTools()).tools;
    await mcp.callTool({ name: tool?.name ?? "", arguments: { message: "hello mcp" } });
    await mcp.close();
    return ["responses", "completions", "a2a", "agui", "mcp"];
  }

  it("lists the runs started from every face, and shows each one's chat", async () => {
    const faces = await runFromEveryFace();
    const page = await openPage();
    const entries = page.locator("#sessions li");
    await expect.poll(() => entries.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(5);
    const seen = new Set<string>();
    for (let i = 0; i < (await entries.count()); i++) {
      await entries.nth(i).click();
      const answers = page.locator("#chat li.assistant:not(.streaming)");
      await answers
        .first()
        .waitFor({ timeout: 15_000 })
        .catch(() => undefined);
      const chat = (await page.locator("#chat").textContent()) ?? "";
      for (const face of faces) if (chat.includes(`hi ${face}`)) seen.add(face);
    }
    expect([...seen].sort()).toEqual([...faces].sort());
    await page.close();
  });

  it("shows a model's markup as text, running none of it", async () => {
    const page = await openPage();
    await send(page, "markup");
    expect(await finalAnswer(page, "bold")).toBe(MARKUP_ANSWER);
    expect(await page.locator("#chat img, #chat b").count()).toBe(0);
    expect(await page.title()).not.toBe("pwned");
    await page.close();
  });

  it("resumes the stream after a reload mid-answer, losing no text", async () => {
    const page = await openPage();
    await send(page, "long");
    const streaming = page.locator("#chat li.assistant.streaming");
    await expect
      .poll(
        async () => ((await streaming.count()) ? ((await streaming.textContent()) ?? "") : ""),
        {
          timeout: 20_000,
          interval: 50,
        },
      )
      .toMatch(/\S{3}/);
    const before = (await streaming.textContent()) ?? "";
    expect(LONG_ANSWER.startsWith(before)).toBe(true);
    expect(before.length).toBeLessThan(LONG_ANSWER.length);
    await page.reload();
    // The same session, its events replayed: the answer goes on streaming, then is whole.
    await streaming.waitFor({ timeout: 15_000 });
    expect(await finalAnswer(page, "The tide")).toBe(LONG_ANSWER);
    expect(await page.locator("#chat li.assistant").count()).toBe(1);
    expect(await page.locator("#chat li.user").allTextContents()).toEqual(["long"]);
    await page.close();
  });
});

/** Chromium headless with a fresh profile, as the brief of these tests says. */
function launchChromium(profile: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1360, height: 760 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
