import { definitionJson, digestOfJson, toToolDefinition } from "../protocol/toolDefinitions.js";
import type { AnnouncedDefinitions } from "../state/workerRegistry.js";
import type { ToolStore } from "../tools/toolStore.js";

/**
 * What a worker's heartbeat says of its tools. The definitions (`ToolDefinition`) are stored
 * content-addressed (`toolDefinition(digest)`): each heartbeat carries only name → digest;
 * a definition is written once when it appears (and again if Redis lost it), and otherwise
 * only has its expiry renewed. The store's `revision` tells when to compute them again, so a
 * tool added or removed while the worker runs is announced by the next heartbeat.
 */
export interface ToolAnnouncement {
  /** The current name → digest of every tool, and the definitions to write or refresh. */
  next(): { digests: Record<string, string>; definitions: AnnouncedDefinitions };
  /** Marks definitions as written (after the heartbeat went through). */
  written(digests: Iterable<string>): void;
  /** Marks definitions Redis no longer had, so the next heartbeat writes them again. */
  lost(digests: Iterable<string>): void;
}

/** Creates the announcement of `store`'s tools (see `ToolAnnouncement`). */
export function createToolAnnouncement(store: ToolStore): ToolAnnouncement {
  let revision = -1;
  let digests: Record<string, string> = {};
  let jsonByDigest = new Map<string, string>();
  const stored = new Set<string>();
  const recompute = () => {
    digests = {};
    jsonByDigest = new Map();
    for (const tool of store.tools.values()) {
      const json = definitionJson(toToolDefinition(tool));
      const digest = digestOfJson(json);
      digests[tool.name] = digest;
      jsonByDigest.set(digest, json);
    }
    for (const digest of stored) if (!jsonByDigest.has(digest)) stored.delete(digest);
    revision = store.revision;
  };
  return {
    next() {
      if (store.revision !== revision) recompute();
      const write = new Map([...jsonByDigest].filter(([digest]) => !stored.has(digest)));
      const refresh = [...jsonByDigest.keys()].filter((digest) => stored.has(digest));
      return { digests, definitions: { write, refresh } };
    },
    written(done) {
      for (const digest of done) if (jsonByDigest.has(digest)) stored.add(digest);
    },
    lost(gone) {
      for (const digest of gone) stored.delete(digest);
    },
  };
}
