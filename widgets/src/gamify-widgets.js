// gamify's widgets: <gamify-streak>, <gamify-points>, <gamify-achievements> and
// <gamify-leaderboard>, defined once when this module loads (README.md of this folder).
import { GamifyAchievements } from "./achievements.js";
import { GamifyLeaderboard } from "./leaderboard.js";
import { GamifyPoints } from "./points.js";
import { GamifyStreak } from "./streak.js";

export { GamifyElement, STREAM_TYPES } from "./core.js";
export { GamifyAchievements, GamifyLeaderboard, GamifyPoints, GamifyStreak };

const ELEMENTS = {
  "gamify-streak": GamifyStreak,
  "gamify-points": GamifyPoints,
  "gamify-achievements": GamifyAchievements,
  "gamify-leaderboard": GamifyLeaderboard,
};

for (const [name, element] of Object.entries(ELEMENTS)) {
  if (!customElements.get(name)) customElements.define(name, element);
}
