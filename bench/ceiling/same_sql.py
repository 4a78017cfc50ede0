"""The statements of the same-work ceiling (same_work.py): hand-written PostgreSQL on the
copies of gamify's tables (schema.sql, `same_*`). Tenant 1, metric 1, boards 1 and 2 are the
bench's configuration (same_work.py). `{n}` is a board's pk, `{max_spare}` the count of
entries below which a newcomer enters without the run's lock."""

LOCK_USER = """
SELECT id, last_active_on FROM same_enduser WHERE tenant_id = 1 AND external_id = %s FOR UPDATE
"""
CREATE_USER = """
INSERT INTO same_enduser (created, updated, tenant_id, external_id, public_id, name, email, tz,
    subscribe_to_emails, device_tokens, attributes, sign_up_date, control,
    notification_preferences, last_active_at, last_active_on)
VALUES (%(now)s, %(now)s, 1, %(external)s, %(public)s, NULL, NULL, NULL, true, '[]', '{}', NULL,
    false, '{}', %(now)s, %(today)s)
ON CONFLICT (tenant_id, external_id) DO NOTHING RETURNING id
"""
# The event's record (total, daily rollup, event) and the reads of every step, in one statement:
# the reads see the rows as they were before it, which none of its writes touches.
RECORD_AND_LOAD = """
WITH t AS (
    INSERT INTO same_metrictotal (tenant_id, user_id, metric_id, total, updated)
    VALUES (1, %(user)s, 1, %(value)s, %(now)s)
    ON CONFLICT (user_id, metric_id) DO UPDATE SET
        total = same_metrictotal.total + EXCLUDED.total, updated = EXCLUDED.updated
    RETURNING total
), d AS (
    INSERT INTO same_metricdailychange (tenant_id, user_id, metric_id, date, change, events)
    VALUES (1, %(user)s, 1, %(today)s, %(value)s, 1)
    ON CONFLICT (user_id, metric_id, date) DO UPDATE SET
        change = same_metricdailychange.change + EXCLUDED.change,
        events = same_metricdailychange.events + 1
), e AS (
    INSERT INTO same_metricevent (public_id, tenant_id, user_id, metric_id, value, total_after,
        attributes, idempotency_key, occurred_at, local_date)
    SELECT %(event)s, 1, %(user)s, 1, %(value)s, t.total, '{}', NULL, %(now)s, %(today)s FROM t
)
SELECT t.total,
    (SELECT json_build_array(length, started, settled_through)
     FROM same_streakstate WHERE user_id = %(user)s),
    (SELECT coalesce(json_agg(achievement_id), '[]')
     FROM same_achievementcompletion WHERE user_id = %(user)s),
    (SELECT coalesce(json_object_agg(system_id, total), '{}')
     FROM same_pointstotal WHERE user_id = %(user)s),
    (SELECT coalesce(json_object_agg(trigger_id, mark), '{}')
     FROM same_pointstriggermark WHERE user_id = %(user)s),
    (SELECT coalesce(json_object_agg(leaderboard_id, json_build_array(id, value, reached_at)), '{}')
     FROM same_leaderboardentry
     WHERE leaderboard_id IN (1, 2) AND run_start = %(run)s AND "group" = ''
        AND user_id = %(user)s)
FROM t
"""
WRITE_STREAK = """
p AS (
    INSERT INTO same_streakperiod (tenant_id, user_id, frequency, period_start, period_end,
        length, extended, used_freeze, used_pause, reset_at)
    VALUES (1, %(user)s, 'daily', %(today)s, %(today)s, %(length)s, true, false, false, NULL)
    ON CONFLICT (user_id, frequency, period_start) DO UPDATE SET
        length = EXCLUDED.length, extended = EXCLUDED.extended
), s AS (
    INSERT INTO same_streakstate (tenant_id, user_id, frequency, length, started,
        settled_through, extended_at, tz, due_at, freezes, freezes_earned_on, enabled,
        pref_mode, pref_thresholds, pref_days_off, updated)
    VALUES (1, %(user)s, 'daily', %(length)s, %(started)s, %(today)s, %(now)s, NULL, %(due)s, 0,
        %(started)s, true, NULL, NULL, NULL, %(now)s)
    ON CONFLICT (user_id) DO UPDATE SET length = EXCLUDED.length, started = EXCLUDED.started,
        settled_through = EXCLUDED.settled_through, extended_at = EXCLUDED.extended_at,
        due_at = EXCLUDED.due_at, updated = EXCLUDED.updated
)"""
WRITE_COMPLETION = """
c{n} AS (
    INSERT INTO same_achievementcompletion (public_id, tenant_id, achievement_id, user_id,
        completed_at, backdated)
    VALUES (%(c{n}_public)s, 1, %(c{n}_pk)s, %(user)s, %(now)s, false)
    ON CONFLICT (achievement_id, user_id) DO NOTHING
)"""
# Awards exactly once (their dedupe key), then what was inserted added to the totals (with the
# level) and the daily changes; the marks of the metric triggers that moved.
WRITE_POINTS = """
a AS (
    INSERT INTO same_pointsaward (public_id, tenant_id, user_id, system_id, trigger_id,
        trigger_snapshot, awarded, total_after, boosts, dedupe_key, created, local_date)
    SELECT v.public_id, 1, %(user)s, v.system_id, v.trigger_id, v.snapshot, v.awarded,
        v.total_after, '[]', v.dedupe_key, %(now)s, %(today)s
    FROM jsonb_to_recordset(%(awards)s::jsonb) AS v(public_id uuid, system_id bigint,
        trigger_id bigint, snapshot jsonb, awarded bigint, total_after bigint, dedupe_key text)
    ON CONFLICT (system_id, user_id, dedupe_key) DO NOTHING
    RETURNING system_id, awarded
), sums AS (
    SELECT a.system_id, sum(a.awarded) AS added, l.level_id
    FROM a JOIN jsonb_to_recordset(%(levels)s::jsonb) AS l(system_id bigint, level_id bigint)
        ON l.system_id = a.system_id
    GROUP BY a.system_id, l.level_id
), pt AS (
    INSERT INTO same_pointstotal (tenant_id, user_id, system_id, total, level_id,
        first_activity_at)
    SELECT 1, %(user)s, system_id, added, level_id, %(now)s FROM sums
    ON CONFLICT (user_id, system_id) DO UPDATE SET
        total = same_pointstotal.total + EXCLUDED.total, level_id = EXCLUDED.level_id
), pd AS (
    INSERT INTO same_pointsdailychange (tenant_id, user_id, system_id, date, change)
    SELECT 1, %(user)s, system_id, %(today)s, added FROM sums
    ON CONFLICT (user_id, system_id, date) DO UPDATE SET
        change = same_pointsdailychange.change + EXCLUDED.change
), pm AS (
    INSERT INTO same_pointstriggermark (user_id, trigger_id, mark, due_at)
    SELECT %(user)s, m.trigger_id, m.mark, NULL
    FROM jsonb_to_recordset(%(marks)s::jsonb) AS m(trigger_id bigint, mark bigint)
    ON CONFLICT (user_id, trigger_id) DO UPDATE SET mark = EXCLUDED.mark
)"""
WRITE_ACTIVITY = """
u AS (
    UPDATE same_enduser SET last_active_at = %(now)s, last_active_on = %(today)s
    WHERE id = %(user)s
)"""
# A board's entry: moved when the user has one, else entered while the board has room to
# spare (a newcomer near a full board takes the careful path: ENTER_LOCKED).
MOVE_ENTRY = """
b{n} AS (
    UPDATE same_leaderboardentry SET value = %(b{n}_value)s, reached_at = %(now)s
    WHERE id = %(b{n}_entry)s RETURNING id
)"""
ENTER = """
b{n} AS (
    INSERT INTO same_leaderboardentry (leaderboard_id, run_start, "group", user_id, value,
        reached_at)
    SELECT {n}, %(run)s, '', %(user)s, %(b{n}_value)s, %(now)s
    WHERE (SELECT count(*) FROM same_leaderboardentry
           WHERE leaderboard_id = {n} AND run_start = %(run)s AND "group" = '')
        < {max_spare}
    RETURNING id
)"""
# Where the user stands among the others of a board (their rows as of the statement's start,
# which none of its writes touches): others ahead of the old and of the new place, how many
# others there are, and the lowest of their values. Rank order: value down, earlier first.
STANDING = """
(SELECT json_build_array(
    count(*) FILTER (WHERE value > %(b{n}_old)s
                     OR (value = %(b{n}_old)s AND reached_at < %(b{n}_old_at)s)),
    count(*) FILTER (WHERE value > %(b{n}_value)s
                     OR (value = %(b{n}_value)s AND reached_at < %(now)s)),
    count(*), min(value), (SELECT count(*) FROM b{n}))
 FROM same_leaderboardentry
 WHERE leaderboard_id = {n} AND run_start = %(run)s AND "group" = '' AND user_id <> %(user)s)"""
DISPLACE_AND_ENTER = """
WITH low AS (
    SELECT id FROM same_leaderboardentry
    WHERE leaderboard_id = %(board)s AND run_start = %(run)s AND "group" = ''
        AND user_id <> %(user)s AND value < %(value)s AND NOT %(room)s
    ORDER BY value, reached_at DESC LIMIT 1
), gone AS (
    DELETE FROM same_leaderboardentry WHERE id IN (SELECT id FROM low) RETURNING id
)
INSERT INTO same_leaderboardentry (leaderboard_id, run_start, "group", user_id, value,
    reached_at)
SELECT %(board)s, %(run)s, '', %(user)s, %(value)s, %(now)s
WHERE %(room)s OR EXISTS (SELECT 1 FROM gone)
RETURNING id
"""
STANDING_ALONE = """
SELECT count(*) FILTER (WHERE value > %(value)s OR (value = %(value)s AND reached_at < %(now)s)),
    count(*), min(value)
FROM same_leaderboardentry
WHERE leaderboard_id = %(board)s AND run_start = %(run)s AND "group" = '' AND user_id <> %(user)s
"""
