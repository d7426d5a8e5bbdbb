import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type ProcessRole, readClusterConfig, SETTINGS } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

// Static checks of the deployment files: there is no Docker engine in CI, so the test reads
// docker-compose.yml, Dockerfile and .dockerignore and checks them against the repository.

const root = new URL("../../", import.meta.url);
const repoPath = (relative: string): string => fileURLToPath(new URL(relative, root));
const readText = (relative: string): string => readFileSync(repoPath(relative), "utf8");

type Environment = Record<string, string | number | boolean | null> | string[];

/** A compose text with each `${VAR:-default}` resolved to its default, as on an empty host. */
function withDefaults(text: string): string {
  return text.replace(/\$\{[A-Z0-9_]+(?::?[-?]([^}]*))?\}/g, (match, word?: string) =>
    match.includes("?") ? "" : (word ?? ""),
  );
}

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Environment;
  ports?: (string | number | { target?: number; published?: number | string })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[] };
  container_name?: string;
  stop_grace_period?: string;
  init?: boolean;
  volumes?: (string | { source?: string; target?: string })[];
}

interface ComposeFile {
  version?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const composeText = readText("docker-compose.yml");
const compose: ComposeFile = parse(composeText);
const packageJson: { scripts: Record<string, string>; workspaces: string[] } = JSON.parse(
  readText("package.json"),
);
/** The variables each process reads, from the settings catalogue. */
function variablesReadBy(role: ProcessRole): string[] {
  return Object.values(SETTINGS)
    .filter((setting) => (setting.roles as readonly ProcessRole[]).includes(role))
    .map((setting) => setting.env);
}

function service(name: string): ComposeService {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service "${name}"`);
  return found;
}

function commandText(svc: ComposeService): string {
  const { command } = svc;
  if (command === undefined) return "";
  return Array.isArray(command) ? command.join(" ") : command;
}

/** The environment as a map; `${VAR:-default}` is resolved to its default (an empty host). */
function environmentOf(svc: ComposeService): Record<string, string> {
  const raw = svc.environment ?? {};
  const entries: [string, string][] = Array.isArray(raw)
    ? raw.map((line) => {
        const eq = line.indexOf("=");
        return eq === -1 ? [line, ""] : [line.slice(0, eq), line.slice(eq + 1)];
      })
    : Object.entries(raw).map(([key, value]) => [key, value === null ? "" : String(value)]);
  return Object.fromEntries(entries.map(([key, value]) => [key, withDefaults(value)]));
}

function dependsOnHealthy(svc: ComposeService, dependency: string): boolean {
  const deps = svc.depends_on;
  if (deps === undefined || Array.isArray(deps)) return false;
  return deps[dependency]?.condition === "service_healthy";
}

/** The compiled entry point each service runs, its npm script, and its package's bin. */
const entryFor: Record<string, { script: string; app: string }> = {
  coordinator: { script: "start:coordinator", app: "apps/coordinator" },
  "tool-worker": { script: "start:worker", app: "apps/tool-worker" },
  gateway: { script: "start:gateway", app: "apps/gateway" },
};

describe("docker-compose.yml", () => {
  it("is a compose-spec file with redis, coordinator and tool-worker", () => {
    expect(compose.version).toBeUndefined();
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(["redis", "coordinator", "tool-worker"]),
    );
  });

  it("runs redis with append-only persistence, noeviction, a data volume and a ping healthcheck", () => {
    const redis = service("redis");
    // Pinned to a release with the CVE-2025-49844 fix (7.4.6+, or 8.x); YIEM_REDIS_IMAGE
    // names another (the container test's local stand-in).
    expect(withDefaults(redis.image ?? "")).toMatch(
      /^redis:(7\.4\.([6-9]|\d{2,})|8\.\d+\.\d+)(-alpine)?$/,
    );
    expect(commandText(redis)).toMatch(/--appendonly yes/);
    // The durability level is stated, not left to Redis' default.
    expect(commandText(redis)).toMatch(/--appendfsync (always|everysec)\b/);
    expect(commandText(redis)).toMatch(/--maxmemory \d+[kmg]b/);
    expect(commandText(redis)).toMatch(/--maxmemory-policy noeviction/);
    const dataVolume = (redis.volumes ?? []).find((v) =>
      typeof v === "string" ? v.endsWith(":/data") : v.target === "/data",
    );
    expect(dataVolume).toBeDefined();
    const volumeName =
      typeof dataVolume === "string" ? dataVolume.split(":")[0] : dataVolume?.source;
    expect(Object.keys(compose.volumes ?? {})).toContain(volumeName);
    expect([redis.healthcheck?.test ?? []].flat().join(" ")).toMatch(/redis-cli ping/);
  });

  it("runs compiled entry points with node itself, as the npm start scripts and the bins do", () => {
    for (const [name, { script, app }] of Object.entries(entryFor)) {
      const command = service(name).command;
      expect(Array.isArray(command), `${name}: exec form, so node gets the signals`).toBe(true);
      expect(command).toEqual(["node", `${app}/dist/main.bundle.js`]);
      expect(existsSync(repoPath(`${app}/src/main.ts`)), `${app}/src/main.ts exists`).toBe(true);
      expect(packageJson.scripts[script]).toBe(commandText(service(name)));
      const manifest = JSON.parse(readText(`${app}/package.json`)) as {
        bin: Record<string, string>;
      };
      expect(Object.values(manifest.bin)).toEqual(["./dist/main.js"]);
    }
  });

  it("sets only environment variables the code reads", () => {
    const roles: Array<[string, ProcessRole]> = [
      ["coordinator", "coordinator"],
      ["tool-worker", "worker"],
    ];
    for (const [name, role] of roles) {
      const env = environmentOf(service(name));
      expect(Object.keys(env).length).toBeGreaterThan(0);
      for (const key of Object.keys(env)) {
        expect(variablesReadBy(role), `${name}: ${key} is read by the ${role}`).toContain(key);
      }
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      expect(env.YIEM_PREFIX).toBe("yiem");
    }
  });

  it("gives values readClusterConfig accepts", () => {
    const coordinator = readClusterConfig(environmentOf(service("coordinator")));
    expect(coordinator.redisUrl).toBe("redis://redis:6379");
    expect(coordinator.port).toBe(3000);
    // Pass-through variables left empty on the host fall back to the defaults.
    expect(coordinator.model).toBe("gpt-4o-mini");
    expect(coordinator.openaiApiKey).toBeUndefined();

    const worker = readClusterConfig(environmentOf(service("tool-worker")));
    expect(worker.workerConcurrency).toBe(16);
    expect(worker.queues).toEqual(["default"]);
  });

  it("caps a coordinator's heap growth at 150 % unless YIEM_HEAP_GROWTH_PERCENT says otherwise", () => {
    expect(readClusterConfig({}).heapGrowthPercent).toBe(150);
    expect(readClusterConfig({ YIEM_HEAP_GROWTH_PERCENT: "0" }).heapGrowthPercent).toBe(0);
    expect(readClusterConfig({ YIEM_HEAP_GROWTH_PERCENT: "300" }).heapGrowthPercent).toBe(300);
    for (const bad of ["abc", "-5", "1.5"]) {
      expect(() => readClusterConfig({ YIEM_HEAP_GROWTH_PERCENT: bad })).toThrow(
        /YIEM_HEAP_GROWTH_PERCENT/,
      );
    }
  });

  it("passes the model and admin settings through from the host", () => {
    const raw = service("coordinator").environment;
    const text = JSON.stringify(raw);
    for (const key of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "YIEM_MODEL"]) {
      expect(text, key).toContain(`\${${key}:-}`);
    }
  });

  it("requires Bull Board's credentials, so the coordinator listens where its published port reaches", () => {
    const raw = service("coordinator").environment as Record<string, string>;
    // `:?`: compose refuses to start without them; with them YIEM_ADMIN_HOST defaults to 0.0.0.0.
    expect(raw.YIEM_ADMIN_USER).toMatch(/^\$\{YIEM_ADMIN_USER:\?.+\}$/);
    expect(raw.YIEM_ADMIN_PASSWORD).toMatch(/^\$\{YIEM_ADMIN_PASSWORD:\?.+\}$/);
    expect(readClusterConfig({ YIEM_ADMIN_HOST: "" }).adminHost).toBeUndefined();
  });

  it("passes tools, agents and MCP settings through only when the host sets them, so an image's own stay", () => {
    const passThrough = (name: string) =>
      Object.entries(service(name).environment ?? {})
        .filter(([, value]) => value === null)
        .map(([key]) => key);
    expect(passThrough("coordinator").sort()).toEqual(
      ["YIEM_AGENTS", "YIEM_TOOLS_DIR", "YIEM_TOOLS_STRICT"].sort(),
    );
    expect(passThrough("tool-worker").sort()).toEqual(
      ["YIEM_MCP_CONFIG", "YIEM_TOOLS_DIR", "YIEM_TOOLS_STRICT"].sort(),
    );
  });

  it("publishes the coordinator on 3000 with a /healthz healthcheck", () => {
    const coordinator = service("coordinator");
    const ports = (coordinator.ports ?? []).map((p) =>
      typeof p === "object" ? `${p.published}:${p.target}` : String(p),
    );
    // A host port range, so several coordinators can be scaled on one host.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose variable syntax, not a template
    expect(ports).toContain("${YIEM_COORDINATOR_PORTS:-3000-3009}:3000");
    const test = [coordinator.healthcheck?.test ?? []].flat().join(" ");
    expect(test).toContain("http://127.0.0.1:3000/healthz");
    expect(environmentOf(coordinator).PORT).toBe("3000");
    expect(coordinator.init).toBe(true);
    expect(coordinator.stop_grace_period).toBe("30s");
  });

  it("checks each tool-worker's liveness on WORKER_PORT, which it serves (unpublished)", () => {
    const worker = service("tool-worker");
    const env = environmentOf(worker);
    const config = readClusterConfig(env);
    expect(config.workerPort).toBeDefined();
    expect(env.WORKER_PORT).toBe(String(config.workerPort));
    const test = [worker.healthcheck?.test ?? []].flat().join(" ");
    expect(test).toContain(`http://127.0.0.1:${config.workerPort}/healthz`);
    // Loopback unless the host says otherwise: the healthcheck runs inside the container.
    expect(config.workerHost).toBe("127.0.0.1"); // WORKER_HOST unset: its default
  });

  it("lets tool-worker scale: no container_name, no host ports", () => {
    const worker = service("tool-worker");
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
    expect(worker.init).toBe(true);
    // Longer than the coordinator's: a worker drains its running tool calls on SIGTERM.
    expect(worker.stop_grace_period).toBe("60s");
  });

  it("builds coordinator and tool-worker from the Dockerfile and starts them after redis is healthy", () => {
    for (const name of ["coordinator", "tool-worker"]) {
      const svc = service(name);
      const build = svc.build;
      const dockerfile =
        typeof build === "object" ? (build.dockerfile ?? "Dockerfile") : "Dockerfile";
      expect(build, `${name} builds`).toBeDefined();
      expect(dockerfile).toBe("Dockerfile");
      expect(dependsOnHealthy(svc, "redis"), `${name} depends_on redis healthy`).toBe(true);
    }
    expect(service("tool-worker").image).toBe(service("coordinator").image);
    expect(withDefaults(service("coordinator").image ?? "")).toBe("yiem:local");
  });

  it("says how to run it", () => {
    expect(composeText).toContain("docker compose up --build --scale tool-worker=8");
    expect(composeText).toContain("docs/OPERATIONS.md");
    expect(composeText).toContain("http://localhost:3000/admin/queues");
  });
});

interface Instruction {
  keyword: string;
  args: string;
}

function dockerfileInstructions(text: string): Instruction[] {
  return text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [keyword = "", ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    });
}

/** Sources of a COPY instruction (flags dropped, destination dropped). */
function copySources(args: string): string[] {
  const trimmed = args.trim();
  const parts: string[] = trimmed.startsWith("[")
    ? JSON.parse(trimmed)
    : trimmed.split(/\s+/).filter((part) => !part.startsWith("--"));
  return parts.slice(0, -1);
}

describe("Dockerfile", () => {
  const dockerfilePath = "Dockerfile";

  it("exists and starts from node 20 (NODE_IMAGE, by default node:20-bookworm-slim)", () => {
    expect(existsSync(repoPath(dockerfilePath))).toBe(true);
    const instructions = dockerfileInstructions(readText(dockerfilePath));
    const from = instructions.filter((i) => i.keyword === "FROM");
    expect(from.length).toBeGreaterThan(0);
    const nodeImage = instructions
      .find((i) => i.keyword === "ARG" && i.args.startsWith("NODE_IMAGE="))
      ?.args.slice("NODE_IMAGE=".length);
    expect(nodeImage).toMatch(/^node:20(\b|-)/);
    for (const instruction of from)
      expect(instruction.args).toMatch(/^\$\{NODE_IMAGE\}( AS \w+)?$/);
  });

  it("stops a process whose tool file fails to load, unless YIEM_TOOLS_STRICT=0 says otherwise", () => {
    const env = dockerfileInstructions(readText(dockerfilePath)).filter((i) => i.keyword === "ENV");
    expect(env.map((i) => i.args)).toContain("YIEM_TOOLS_STRICT=1");
    expect(readClusterConfig({ YIEM_TOOLS_STRICT: "1" }).toolsStrict).toBe(true);
    expect(readClusterConfig({ YIEM_TOOLS_STRICT: "0" }).toolsStrict).toBe(false);
  });

  it("copies only paths that exist in the repo, and only compiled output from the build stage", () => {
    const copies = dockerfileInstructions(readText(dockerfilePath)).filter(
      (i) => i.keyword === "COPY",
    );
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      for (const source of copySources(copy.args)) {
        if (/--from=build/.test(copy.args))
          expect(source).toMatch(/^\/app\/(packages|apps)\/[a-z-]+\/dist$/);
        else expect(existsSync(repoPath(source)), `COPY ${source} exists`).toBe(true);
      }
    }
  });

  it("installs every workspace manifest with npm ci before the sources, and only production dependencies in the image", () => {
    const instructions = dockerfileInstructions(readText(dockerfilePath));
    const stages = instructions.reduce<Instruction[][]>((all, i) => {
      if (i.keyword === "FROM") all.push([]);
      all.at(-1)?.push(i);
      return all;
    }, []);
    expect(stages).toHaveLength(2);
    for (const stage of stages) {
      const npmCi = stage.findIndex((i) => i.keyword === "RUN" && /\bnpm ci\b/.test(i.args));
      expect(npmCi).toBeGreaterThan(-1);
      const copiedBefore = stage
        .slice(0, npmCi)
        .filter((i) => i.keyword === "COPY")
        .flatMap((i) => copySources(i.args));
      expect(copiedBefore).toEqual(expect.arrayContaining(["package.json", "package-lock.json"]));
      for (const workspace of packageJson.workspaces) {
        expect(copiedBefore, `${workspace}/package.json before npm ci`).toContain(
          `${workspace}/package.json`,
        );
      }
    }
    const final = stages.at(-1) ?? [];
    expect(final.find((i) => i.keyword === "RUN" && /\bnpm ci\b/.test(i.args))?.args).toMatch(
      /--omit=dev/,
    );
    expect(
      final.some(
        (i) => i.keyword === "COPY" && /^(packages|apps)$/.test(i.args.split(" ")[0] ?? ""),
      ),
    ).toBe(false);
  });

  it("runs as node and starts the compiled coordinator with node (no npm, npx or tsx)", () => {
    const instructions = dockerfileInstructions(readText(dockerfilePath));
    expect(instructions.some((i) => i.keyword === "WORKDIR" && i.args === "/app")).toBe(true);
    expect(instructions.filter((i) => i.keyword === "USER").at(-1)?.args).toBe("node");
    const cmd = instructions.filter((i) => i.keyword === "CMD").at(-1);
    const cmdArgs: string[] = JSON.parse(cmd?.args ?? "[]");
    expect(cmdArgs).toEqual(["node", "apps/coordinator/dist/main.bundle.js"]);
  });
});

describe(".dockerignore", () => {
  it("excludes node_modules, dist and .git, and none of what the Dockerfile copies", () => {
    const entries = readText(".dockerignore")
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    expect(entries).toEqual(expect.arrayContaining(["node_modules", "dist", ".git"]));
    const sources = dockerfileInstructions(readText("Dockerfile"))
      .filter((i) => i.keyword === "COPY" && !/--from=/.test(i.args))
      .flatMap((i) => copySources(i.args));
    for (const source of sources) expect(entries, source).not.toContain(source);
  });
});
