/**
 * `checkPortFree` (`@yiem/core/internal`): what a coordinator checks first, on its own thread,
 * so a taken port fails its start at once, before its front door's thread is up.
 */
import { createServer } from "node:net";
import { PortInUseError } from "@yiem/core";
import { checkPortFree } from "@yiem/core/internal";
import { freePort } from "@yiem/testing";
import { describe, expect, it } from "vitest";

describe("checking a port", () => {
  it("rejects with PortInUseError when the port is held, and lets a free one go again", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", () => resolve()));
    const held = (holder.address() as { port: number }).port;
    await expect(checkPortFree(held, "127.0.0.1")).rejects.toBeInstanceOf(PortInUseError);
    holder.close();

    const port = await freePort();
    await checkPortFree(port, "127.0.0.1");
    const next = createServer();
    await new Promise<void>((resolve, reject) => {
      next.once("error", reject);
      next.listen(port, "127.0.0.1", () => resolve());
    });
    next.close();
  });
});
