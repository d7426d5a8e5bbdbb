import type { Sessions, SessionsConfiguration } from "../measurements/sessions.js";

/** One measured load of the sessions scenario and the title of its column. */
export interface SessionsColumn {
  title: string;
  config: SessionsConfiguration;
}

/**
 * The loads of the sessions scenario in the order they ran, each with its title: the bulk
 * shape at concurrency = sessions and at the default, then (when measured) the sends shape
 * and the bulk shape on two coordinators.
 */
export function sessionsColumns(s: Sessions): SessionsColumn[] {
  const c = (n: number) => n.toLocaleString("en-US");
  const columns: SessionsColumn[] = [
    { title: `addBulk, concurrency ${c(s.large.concurrency)}`, config: s.large },
    {
      title: `addBulk, concurrency ${c(s.standard.concurrency)} (the default)`,
      config: s.standard,
    },
  ];
  if (s.sends)
    columns.push({
      title: `separate sends + progress, concurrency ${c(s.sends.concurrency)}`,
      config: s.sends,
    });
  if (s.twoCoordinators)
    columns.push({
      title: `addBulk, two coordinators of ${c(s.twoCoordinators.concurrency)}`,
      config: s.twoCoordinators,
    });
  return columns;
}
