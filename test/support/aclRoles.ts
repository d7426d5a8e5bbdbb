import { readFileSync } from "node:fs";

/** The roles `docs/SECURITY.md` gives a Redis ACL line for. */
export type AclRole = "coordinator" | "worker" | "client" | "approver" | "gateway";

/**
 * The ACL line `docs/SECURITY.md` gives `role`, as a `redis-server` ACL file takes it:
 * `password` instead of `CHANGE-ME`, and any prefix instead of `yiem` (each test file uses a
 * fresh prefix). Tests run the documented lines themselves, so the doc cannot drift from them.
 *
 * @example aclLines: [documentedAclLine("client", "pw")]
 */
export function documentedAclLine(role: AclRole, password: string): string {
  const doc = readFileSync(new URL("../../docs/SECURITY.md", import.meta.url), "utf8");
  const line = doc.split("\n").find((l) => l.startsWith(`user ${role} on >CHANGE-ME `));
  if (!line) throw new Error(`docs/SECURITY.md gives no ACL line for the ${role} role`);
  return line.replace(">CHANGE-ME", `>${password}`).replaceAll("yiem:", "*:");
}

/** `redisUrl` (any user) with the ACL user `role` and its password instead. */
export function urlAs(redisUrl: string, role: AclRole, password: string): string {
  const url = new URL(redisUrl);
  url.username = role;
  url.password = password;
  return url.toString().replace(/\/$/, "");
}
