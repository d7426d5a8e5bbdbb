import { z } from "zod";
import { defineRoute, json, type Route } from "../http/route.js";

/** The OpenAPI document of `routes`, made from the same zod schemas that validate them. */
export function buildOpenApiDocument(routes: readonly Route[], version: string): unknown {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const entry = paths[route.path] ?? {};
    entry[route.method.toLowerCase()] = describeOperation(route);
    paths[route.path] = entry;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Yiem gateway", version },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
    paths,
  };
}

function describeOperation(route: Route): Record<string, unknown> {
  const parameters = [
    ...pathParameters(route.path),
    ...(route.query ? queryParameters(route.query) : []),
  ];
  const responses = Object.fromEntries(
    Object.entries(route.responses).map(([status, response]) => [
      status,
      {
        description: response.description,
        ...(response.schema
          ? { content: { "application/json": { schema: toSchema(response.schema, "output") } } }
          : response.mediaType
            ? { content: { [response.mediaType]: {} } }
            : {}),
      },
    ]),
  );
  return {
    summary: route.summary,
    ...(route.scope ? { security: [{ bearer: [] }], "x-scope": route.scope } : { security: [] }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: toSchema(route.body, "input") } },
          },
        }
      : {}),
    responses,
  };
}

function toSchema(schema: z.ZodType, io: "input" | "output"): unknown {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

function pathParameters(path: string) {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => ({
    name: match[1],
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
}

function queryParameters(query: z.ZodType) {
  const schema = toSchema(query, "input") as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: schema.required?.includes(name) ?? false,
    schema: property,
  }));
}

/** `GET /v1/openapi.json`: the document, public (no key needed). */
export function openApiRoute(document: () => unknown): Route {
  return defineRoute({
    method: "GET",
    path: "/v1/openapi.json",
    summary: "This API's OpenAPI 3.1 document.",
    responses: { 200: { description: "the document" } },
    async handle() {
      return json(200, document());
    },
  }) as Route;
}
