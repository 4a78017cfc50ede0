"""OpenAPI documentation of fair play's extension routes (documentation only)."""

# The tag of the operations in the extension admin document (gamify/urls.py describes it).
FAIRPLAY_TAGS = ["fair play"]

EXCLUDE = (
    "Leaves the user out of every leaderboard of the tenant (every kind, run and breakdown "
    "group), of league cohorts' standings, results and rewards, and of achievements' rarity, "
    "at once; the ranks of everyone else are recomputed exactly. The user's events are still "
    "accepted and counted (totals, points, streaks, achievements), and the application API "
    "answers the user's own reads as before: their rank on a leaderboard or in their cohort is "
    "the one they would hold among the others, who do not see them. Neighbours and friends "
    "reads leave them out. The reason, the moment and who excluded them (the admin key, or the "
    "staff member on the dashboard) are kept on the exclusion; `user.excluded` is announced to "
    "webhooks. Excluding an excluded user changes nothing (`changed` false; the first reason "
    "stays)."
)
REINSTATE = (
    "Lifts the user's exclusion: their entries return to every leaderboard in place, with the "
    "values their events gave them meanwhile, and every ranking counts them again at once. "
    "League weeks that ended while they were excluded keep no result. `user.reinstated` is "
    "announced to webhooks. Reinstating a user who is not excluded changes nothing."
)
