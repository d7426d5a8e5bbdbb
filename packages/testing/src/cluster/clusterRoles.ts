/** Which Yiem process a launcher starts: a coordinator, a tool worker or a gateway. */
export type ClusterRole = "coordinator" | "worker" | "gateway";

/**
 * How the apps run: `compiled` as deployed (`node apps/<app>/dist/main.bundle.js`, the command
 * of the Dockerfile and docker-compose.yml; needs `npm run build` first: `tsc -b`, then
 * `scripts/bundleApps.ts`), or `source` from their TypeScript
 * sources with tsx and the `yiem-source` condition (workspace packages from their sources too;
 * tsx must resolve from the working directory).
 */
export type ClusterLaunch = "compiled" | "source";

/** What the launcher knows of a role: its app folder, its ready line, its HTTP port variable. */
interface RoleEntry {
  app: string;
  ready: string;
  /** The variable of the role's HTTP port. */
  portVariable: string;
  /** Whether the launcher picks a free port when the environment sets none. */
  pickPort: boolean;
}

const ROLES: Record<ClusterRole, RoleEntry> = {
  coordinator: {
    app: "apps/coordinator",
    ready: "coordinator ready",
    portVariable: "PORT",
    pickPort: true,
  },
  worker: {
    app: "apps/tool-worker",
    ready: "tool worker ready",
    portVariable: "WORKER_PORT",
    pickPort: false,
  },
  gateway: {
    app: "apps/gateway",
    ready: "gateway ready",
    portVariable: "GATEWAY_PORT",
    pickPort: true,
  },
};

/** The role's facts: its ready log message and its HTTP port variable. */
export function roleEntry(role: ClusterRole): Readonly<RoleEntry> {
  return ROLES[role];
}

/**
 * The exec-form command of `role` (relative to the Yiem checkout it runs in), with `nodeFlags`
 * (e.g. `--inspect`, `--cpu-prof`) before the entry point.
 */
export function roleCommand(
  role: ClusterRole,
  launch: ClusterLaunch,
  nodeFlags: readonly string[] = [],
): string[] {
  const { app } = ROLES[role];
  return launch === "compiled"
    ? ["node", ...nodeFlags, `${app}/dist/main.bundle.js`]
    : ["node", ...nodeFlags, "--conditions=yiem-source", "--import", "tsx", `${app}/src/main.ts`];
}
