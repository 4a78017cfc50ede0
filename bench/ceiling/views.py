"""The ceiling's three views: the event transaction in six statements (user upsert, event,
total, streak, award, points), a top-100 read and a one-user points read, in raw SQL, with
responses shaped like gamify's. No authentication, no configuration, no validation beyond what
the JSON needs: what is left is the cost of Django's request cycle and of PostgreSQL."""

import json
from decimal import Decimal

from django.db import connection, transaction
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

POINTS_PER_EVENT = 10

UPSERT_USER = """
INSERT INTO ceiling_user (external_id) VALUES (%s)
ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
RETURNING id
"""
INSERT_EVENT = """
INSERT INTO ceiling_event (user_id, metric, value, created) VALUES (%s, %s, %s, now())
RETURNING id
"""
ADD_TOTAL = """
INSERT INTO ceiling_total (user_id, metric, total) VALUES (%s, %s, %s)
ON CONFLICT (user_id, metric) DO UPDATE SET total = ceiling_total.total + EXCLUDED.total
RETURNING total
"""
EXTEND_STREAK = """
INSERT INTO ceiling_streak (user_id, length, last_day) VALUES (%s, 1, current_date)
ON CONFLICT (user_id) DO UPDATE SET
    length = CASE
        WHEN ceiling_streak.last_day = current_date THEN ceiling_streak.length
        WHEN ceiling_streak.last_day = current_date - 1 THEN ceiling_streak.length + 1
        ELSE 1 END,
    last_day = current_date
RETURNING length
"""
INSERT_AWARD = "INSERT INTO ceiling_award (user_id, points, created) VALUES (%s, %s, now())"
ADD_POINTS = """
INSERT INTO ceiling_points (user_id, total) VALUES (%s, %s)
ON CONFLICT (user_id) DO UPDATE SET total = ceiling_points.total + EXCLUDED.total
RETURNING total
"""
TOP = """
SELECT u.external_id, t.total FROM ceiling_total t JOIN ceiling_user u ON u.id = t.user_id
WHERE t.metric = %s ORDER BY t.total DESC, u.external_id LIMIT %s
"""
USER_POINTS = """
SELECT p.total FROM ceiling_points p JOIN ceiling_user u ON u.id = p.user_id
WHERE u.external_id = %s
"""


def _number(value: Decimal) -> float | int:
    return int(value) if value == value.to_integral_value() else float(value)


@csrf_exempt
def event(request: HttpRequest, key: str) -> JsonResponse:
    body = json.loads(request.body)
    user_id, value = body["user"]["id"], Decimal(str(body["value"]))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(UPSERT_USER, [user_id])
        (pk,) = cursor.fetchone()
        cursor.execute(INSERT_EVENT, [pk, key, value])
        (event_id,) = cursor.fetchone()
        cursor.execute(ADD_TOTAL, [pk, key, value])
        (total,) = cursor.fetchone()
        cursor.execute(EXTEND_STREAK, [pk])
        (length,) = cursor.fetchone()
        cursor.execute(INSERT_AWARD, [pk, POINTS_PER_EVENT])
        cursor.execute(ADD_POINTS, [pk, POINTS_PER_EVENT])
        (points,) = cursor.fetchone()
    return JsonResponse(
        {
            "eventId": str(event_id),
            "metricId": key,
            "total": _number(total),
            "achievements": [],
            "currentStreak": {"length": length, "frequency": "daily"},
            "points": {"xp": {"added": POINTS_PER_EVENT, "total": points}},
            "leaderboards": {},
            "idempotentReplayed": False,
        },
        status=201,
    )


def top(request: HttpRequest, key: str) -> JsonResponse:
    limit = int(request.GET.get("limit", "10"))
    with connection.cursor() as cursor:
        cursor.execute(TOP, [key, limit])
        rows = cursor.fetchall()
    rankings = [
        {"userId": user, "userName": None, "rank": rank, "value": _number(total)}
        for rank, (user, total) in enumerate(rows, start=1)
    ]
    return JsonResponse({"key": key, "rankings": rankings})


def points(request: HttpRequest, user_id: str) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute(USER_POINTS, [user_id])
        row = cursor.fetchone()
    if row is None:
        return JsonResponse({"error": "User not found"}, status=404)
    return JsonResponse({"key": "xp", "total": row[0], "level": None, "awards": []})
