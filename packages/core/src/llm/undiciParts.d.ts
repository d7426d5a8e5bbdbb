/**
 * The two files of undici 6 that `llmFetch.ts` imports instead of its index (which loads
 * every part of undici: fetch, WebSocket, EventSource, mocks, caches). undici ships no types
 * for them; these are the signatures of the pinned version.
 */
declare module "undici/lib/api/api-request.js" {
  import type { Dispatcher } from "undici";

  /** `Dispatcher.request`, called on the dispatcher given as `this`. */
  const request: (
    this: Dispatcher,
    options: Dispatcher.RequestOptions,
  ) => Promise<Dispatcher.ResponseData>;
  export default request;
}

declare module "undici/lib/global.js" {
  import type { Dispatcher } from "undici";
  /** The dispatcher set with undici's `setGlobalDispatcher` (an `Agent` until one is). */
  export function getGlobalDispatcher(): Dispatcher;
}
