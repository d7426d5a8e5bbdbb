import type { Sessions10k } from "../measurements/sessions10k.js";
import type { Plan } from "../plan.js";

/**
 * What `--only sessions10k` records (bench/sessions10k.json), apart from the full run's
 * results: when and where, and its figures.
 */
export interface Sessions10kRecord {
  date: string;
  cores: number;
  loadAverageAtStart: number;
  loadAverageAtEnd: number;
  durationS: number;
  plan: Plan["sessions10k"];
  figures: Sessions10k;
}
