// The main application calls of the official Node SDK against a gamify server, and admin calls
// whose answers carry issues. The SDK checks
// every response against its own schemas, so a missing or mistyped field fails here.
// Env: GAMIFY_API (…/v1), GAMIFY_ADMIN (…/admin/v1), GAMIFY_KEY (admin key). Prints one JSON
// line of results; exits 1 with the error on any failure.
import { TrophyApiClient } from "@trophyso/node";

const trophy = new TrophyApiClient({
  apiKey: process.env.GAMIFY_KEY,
  environment: { api: process.env.GAMIFY_API, admin: process.env.GAMIFY_ADMIN },
});
const options = { maxRetries: 0 };
const today = new Date().toISOString().slice(0, 10);
const weekAgo = new Date(Date.now() - 6 * 86400000).toISOString().slice(0, 10);

async function main() {
  const results = {};
  results.created = (await trophy.users.create({ id: "ada", name: "Ada", tz: "UTC" }, options)).id;
  await trophy.users.identify("ada", { email: "ada@example.com" }, options);
  await trophy.users.update("ada", { name: "Ada L." }, options);
  results.name = (await trophy.users.get("ada", options)).name;

  let event;
  for (const value of [300, 300]) {
    event = await trophy.metrics.event("words", { user: { id: "ada", tz: "UTC" }, value }, options);
  }
  await trophy.metrics.event("words", { user: { id: "bob", tz: "UTC" }, value: 100 }, options);
  results.eventTotal = event.total;
  results.eventAchievements = event.achievements.map((a) => a.key ?? a.name);
  results.eventPoints = event.points?.xp?.total;
  results.eventStreak = event.currentStreak?.length;

  const metrics = await trophy.users.allMetrics("ada", options);
  results.metrics = metrics.map((m) => [m.key, m.current, m.status]);
  results.singleMetric = (await trophy.users.singleMetric("ada", "words", options)).current;
  const summary = await trophy.users.metricEventSummary(
    "ada", "words", { aggregation: "daily", startDate: weekAgo, endDate: today }, options);
  results.summaryDays = summary.length;
  results.achievements = (await trophy.users.achievements("ada", { includeIncomplete: "true" }, options)).length;
  results.streak = (await trophy.users.streak("ada", {}, options)).length;
  results.points = (await trophy.users.points("ada", "xp", {}, options)).total;
  const pointsSummary = await trophy.users.pointsEventSummary(
    "ada", "xp", { aggregation: "daily", startDate: weekAgo, endDate: today }, options);
  results.pointsSummaryDays = pointsSummary.length;
  results.userRank = (await trophy.users.leaderboard("ada", "top-writers", {}, options)).rank;
  results.preferences = Object.keys((await trophy.users.getPreferences("ada", options)).notifications ?? {}).length;
  await trophy.users.updatePreferences("ada", { notifications: { recap: ["email"] } }, options);
  const wrapped = await trophy.users.wrapped("ada", {}, options);
  results.wrappedDays = wrapped.activity.daysActive;

  results.allAchievements = (await trophy.achievements.all({}, options)).length;
  const completion = await trophy.achievements.complete("shared", { user: { id: "ada" } }, options);
  results.completed = completion.achievement.key;
  results.streaks = (await trophy.streaks.list({ userIds: ["ada", "bob"] }, options)).length;
  results.pointsSummary = (await trophy.points.summary("xp", {}, options)).length;
  results.pointsSystem = (await trophy.points.system("xp", options)).triggers.length;
  results.boards = (await trophy.leaderboards.all(options)).length;
  const board = await trophy.leaderboards.get("top-writers", { limit: 10 }, options);
  results.rankings = board.rankings.map((r) => [r.userId, r.rank, r.value]);
  // Admin answers carrying issues: the SDK's BulkInsertIssue requires {userId, level, reason}.
  const restored = await trophy.admin.streaks.restore({ users: [{ id: "nobody" }] }, options);
  results.restoreIssues = restored.issues.map((i) => [i.userId, i.level, i.reason]);
  console.log(JSON.stringify(results));
}

main().catch((error) => {
  console.error(error?.constructor?.name, error?.message ?? error);
  if (error?.body) console.error(JSON.stringify(error.body).slice(0, 2000));
  if (error?.errors) console.error(JSON.stringify(error.errors).slice(0, 4000));
  process.exit(1);
});
