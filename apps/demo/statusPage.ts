import { startLocalHttpServer } from "@yiem/testing";

/**
 * Serves the demo's status page: about 64 KiB of HTML sent in slow chunks, so `httpFetch`
 * has progress to report. Returns its URL and `close`.
 */
export async function startStatusPage(): Promise<{ url: string; close(): Promise<void> }> {
  const filler = "<p>All systems nominal.</p>\n".repeat(2400);
  const body = `<html><body><h1>Yiem demo</h1>\n<p>STATUS: all green, 3 regions up</p>\n${filler}</body></html>`;
  const server = await startLocalHttpServer(async (_req, res) => {
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-length": Buffer.byteLength(body),
    });
    const chunk = Math.ceil(body.length / 8);
    for (let i = 0; i < body.length; i += chunk) {
      res.write(body.slice(i, i + chunk));
      await new Promise((resolve) => setTimeout(resolve, 120));
    }
    res.end();
  });
  return { url: `${server.url}/status`, close: server.close };
}
