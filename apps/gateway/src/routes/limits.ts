import { defineRoute, json } from "../http/route.js";
import { limitListSchema } from "../schemas.js";

/**
 * `GET /v1/limits`: the shared provider limits the coordinators apply (`YIEM_MODEL_LIMITS`) as
 * Redis holds them now, for the page and any client: each one's last window against the
 * limit, its 429 pause, and how many model calls wait in its fair line. Only the load: which
 * coordinator or agent waits is `yiem limits`' (an operator's), not a key's, to know.
 */
export const listLimitsRoute = defineRoute({
  method: "GET",
  path: "/v1/limits",
  summary:
    "The shared provider limits (YIEM_MODEL_LIMITS) across every coordinator: requests and tokens of the last window against each limit, a 429's pause, and how many model calls wait in its fair line. Empty when no limit is set.",
  scope: "read",
  responses: { 200: { description: "the limits", schema: limitListSchema } },
  async handle({ services }) {
    const states = await services.client.providerLimits();
    const limits = states.map((state) => ({
      name: state.limit.name,
      requests: state.recentRequests,
      maxRequests: state.limit.requests,
      tokens: state.recentTokens,
      maxTokens: state.limit.tokens,
      windowMs: state.limit.windowMs,
      pausedForMs: state.pausedForMs,
      waiting: state.waitingCount,
    }));
    return json(200, { limits });
  },
});
