import type { Route } from "../http/route.js";
import { a2aRoutes } from "./a2a.js";
import { listAgentsRoute } from "./agents.js";
import { aguiRunRoute } from "./agui.js";
import { aguiConnectRoute } from "./aguiConnect.js";
import { decideApprovalRoute, listApprovalsRoute } from "./approvals.js";
import { chatRoute } from "./chat.js";
import { chatCompletionsRoute, listModelsRoute } from "./chatCompletions.js";
import { sessionEventsRoute, streamTokenRoute } from "./events.js";
import { listLimitsRoute } from "./limits.js";
import { mcpRoute } from "./mcpFace.js";
import { buildOpenApiDocument, openApiRoute } from "./openapi.js";
import { pageRoutes } from "./page.js";
import { responseRoutes } from "./responses.js";
import { runStatusRoute, submitRunRoute } from "./runs.js";
import { abortSessionRoute, listSessionsRoute, sessionDetailRoute } from "./sessions.js";

/**
 * Every route of the gateway, the OpenAPI document's included. A new face (another route
 * file of this folder) adds its routes here, and so to the document.
 */
export function gatewayRoutes(version: string): Route[] {
  const routes = [
    submitRunRoute,
    runStatusRoute,
    listSessionsRoute,
    sessionDetailRoute,
    abortSessionRoute,
    sessionEventsRoute,
    streamTokenRoute,
    listApprovalsRoute,
    decideApprovalRoute,
    listAgentsRoute,
    listLimitsRoute,
    chatRoute,
    chatCompletionsRoute,
    listModelsRoute,
    ...responseRoutes,
    aguiRunRoute,
    aguiConnectRoute,
    ...a2aRoutes(version),
    mcpRoute(version),
  ] as Route[];
  let document: unknown;
  const openapi = openApiRoute(() => {
    document ??= buildOpenApiDocument([...routes, openapi], version);
    return document;
  });
  // The page (GET /) is not the API: outside the document.
  return [...routes, openapi, ...pageRoutes];
}
