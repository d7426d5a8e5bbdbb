import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { parse } from "yaml";
import { repoRoot } from "../support/processes.js";

/**
 * docker-compose.yml's services as `podman run` arguments, for a test that starts them one
 * by one (Debian's podman-compose 1.0.3 ignores `--scale`, profiles and health conditions).
 * Covers what the file uses: image, command, environment (a key without a value passes the
 * host's through when set), named volumes and bind mounts, ports, init, stop_grace_period.
 */

/** One service of the compose file, as written. */
export interface ComposeService {
  image: string;
  command?: string | string[];
  environment?: Record<string, string | null>;
  volumes?: string[];
  ports?: string[];
  init?: boolean;
  stop_grace_period?: string;
  healthcheck?: { test: string[] };
  profiles?: string[];
}

/** The compose file's services, as written. */
export function readComposeServices(): Record<string, ComposeService> {
  const text = readFileSync(join(repoRoot, "docker-compose.yml"), "utf8");
  return (parse(text) as { services: Record<string, ComposeService> }).services;
}

/** Thrown when `${VAR:?message}` meets an unset variable, as compose refuses to start then. */
export class RequiredVariableError extends Error {}

const VARIABLE = /\$\{([A-Za-z0-9_]+)(?:(:?)([-?])([^}]*))?\}/g;

/** Compose's interpolation: `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`. */
export function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    VARIABLE,
    (_match, name: string, colon: string, kind: string, word: string) => {
      const value = env[name];
      const missing = colon === ":" ? value === undefined || value === "" : value === undefined;
      if (!missing) return value ?? "";
      if (kind === "?") throw new RequiredVariableError(`${name}: ${word}`);
      return kind === "-" ? word : "";
    },
  );
}

/** The `-e` arguments: `KEY: value` interpolated; `KEY:` (no value) only when the host sets it. */
function environmentArgs(service: ComposeService, env: Record<string, string>): string[] {
  return Object.entries(service.environment ?? {}).flatMap(([key, value]) => {
    if (value !== null) return ["-e", `${key}=${interpolate(String(value), env)}`];
    return env[key] === undefined ? [] : ["-e", `${key}=${env[key]}`];
  });
}

/** `-v` arguments: a named volume gets the project's prefix, a relative path the repo's root. */
function volumeArgs(
  service: ComposeService,
  env: Record<string, string>,
  project: string,
): string[] {
  return (service.volumes ?? []).flatMap((spec) => {
    const [source = "", ...rest] = interpolate(spec, env).split(":");
    const bind = source.startsWith(".") || isAbsolute(source);
    const resolved = bind
      ? isAbsolute(source)
        ? source
        : join(repoRoot, source)
      : `${project}-${source}`;
    return ["-v", [resolved, ...rest].join(":")];
  });
}

/** The command as arguments: an exec-form list as it is, a string split at whitespace. */
export function commandOf(service: ComposeService, env: Record<string, string>): string[] {
  const { command } = service;
  if (command === undefined) return [];
  if (Array.isArray(command)) return command.map((part) => interpolate(part, env));
  return interpolate(command, env)
    .split(/\s+/)
    .filter((part) => part !== "");
}

/** Seconds of a compose duration (`30s`, `1m`). */
function secondsOf(duration: string): number {
  const match = /^(\d+)(s|m)$/.exec(duration);
  if (!match) throw new Error(`unsupported duration ${duration}`);
  return Number(match[1]) * (match[2] === "m" ? 60 : 1);
}

/** Where a service's container runs: its name, network and the project its volumes belong to. */
export interface Placement {
  project: string;
  network: string;
  containerName: string;
  serviceName: string;
}

/**
 * `podman run -d` arguments for one container of `service`, on `network` under its service's
 * name (so `redis://redis:6379` resolves), after interpolating with `env` (the host's
 * environment compose would read).
 */
export function podmanRunArgs(
  service: ComposeService,
  env: Record<string, string>,
  placement: Placement,
): string[] {
  const ports = (service.ports ?? []).flatMap((spec) => ["-p", interpolate(spec, env)]);
  return [
    "run",
    "-d",
    "--name",
    placement.containerName,
    "--network",
    placement.network,
    "--network-alias",
    placement.serviceName,
    ...(service.init ? ["--init"] : []),
    ...(service.stop_grace_period
      ? ["--stop-timeout", String(secondsOf(service.stop_grace_period))]
      : []),
    ...environmentArgs(service, env),
    ...volumeArgs(service, env, placement.project),
    ...ports,
    interpolate(service.image, env),
    ...commandOf(service, env),
  ];
}

/** A service's healthcheck as a command to `podman exec` (its `CMD` form without `CMD`). */
export function healthcheckCommand(service: ComposeService): string[] {
  const test = service.healthcheck?.test ?? [];
  if (test[0] !== "CMD") throw new Error(`healthcheck ${test.join(" ")} is not in CMD form`);
  return test.slice(1);
}
