"""Quests in the browser: a staff member sets up two daily quests on their pages (goals as
rows, a reward in points), refused first for a goal without a target, then a pool of both;
once users have sent events with the official SDK, the list's figures, a quest's periods in
numbers and a user's quests on their page. Screenshots of each step are saved (conftest.py)."""

from typing import Any

from trophy import UpsertedUser

from apps.metrics.configuration import metric_create
from apps.metrics.domain import MetricSettings
from apps.points.configuration.systems import points_system_create
from apps.points.domain import PointsSystemSettings
from apps.quests.models import Quest, QuestPool, QuestProgress
from apps.users.models import EndUser
from tests.browser.conftest import Staff
from tests.factories import OrganizationWithKey


def saved(staff: Staff) -> None:
    assert not staff.errors(), staff.errors()
    assert staff.all("ul.messagelist li.success"), staff.messages()


def add_goal(staff: Staff, goal: str, target: str) -> None:
    staff.click(".field-goals [data-add-row]")
    rows = staff.all(".field-goals tr[data-row]:not([hidden])")
    row = rows[-1]
    from selenium.webdriver.support.ui import Select

    select = Select(row.find_element("css selector", "select"))
    select.select_by_visible_text(goal)
    field = row.find_element("css selector", "input")
    field.clear()
    field.send_keys(target)


def test_quests_are_set_up_and_followed(staff: Staff, make_client: Any) -> None:
    org = OrganizationWithKey("Acme")
    metric_create(
        org.tenant,
        MetricSettings(name="Words written", key="words", unit_type="number", units="words"),
    )
    points_system_create(org.tenant, PointsSystemSettings(key="xp", name="XP"))

    staff.go("/dashboard/quests/quest/add/")
    staff.fill("name", "Write 100 words")
    staff.fill("key", "words-100")
    staff.pick("status", "active")
    staff.pick("cadence", "daily")
    staff.click(".field-goals [data-add-row]")  # a goal without a target: refused
    rows = staff.all(".field-goals tr[data-row]:not([hidden])")
    from selenium.webdriver.support.ui import Select

    Select(rows[-1].find_element("css selector", "select")).select_by_visible_text(
        "Metric sum: Words written (words)"
    )
    staff.fill("reward_points", "10")
    staff.pick("reward_points_system_id", "XP (xp)")
    assert staff.no_horizontal_scroll()
    staff.shot("quest-form")
    staff.submit('input[name="_continue"]')
    assert "Give the target" in staff.text(".field-goals")
    staff.shot("quest-refused")
    rows = staff.all(".field-goals tr[data-row]:not([hidden])")
    target = rows[0].find_element("css selector", "input")
    target.clear()
    target.send_keys("100")
    add_goal(staff, "Active days (distinct local days with an event)", "1")
    staff.submit('input[name="_continue"]')
    saved(staff)
    quest = Quest.objects.get(key="words-100")
    assert [g["kind"] for g in quest.goals] == ["metric", "active_days"]
    assert quest.reward_points == 10
    assert quest.activated_at is not None

    staff.go("/dashboard/quests/quest/add/")
    staff.fill("name", "Show up")
    staff.fill("key", "show-up")
    staff.pick("status", "active")
    add_goal(staff, "Active days (distinct local days with an event)", "1")
    staff.submit()
    saved(staff)

    # A pool handing out one of the two per user and day.
    staff.go("/dashboard/quests/questpool/add/")
    staff.fill("name", "Daily pick")
    staff.fill("key", "daily-pick")
    staff.fill("size", "1")
    for name in ("Write 100 words", "Show up"):
        staff.click(".field-quests [data-add-row]")
        row = staff.all(".field-quests tr[data-row]:not([hidden])")[-1]
        Select(row.find_element("css selector", "select")).select_by_visible_text(
            f"{name} ({'words-100' if 'Write' in name else 'show-up'}, daily)"
        )
        weight = row.find_element("css selector", "input")
        weight.clear()
        weight.send_keys("2" if "Write" in name else "1")
    assert staff.no_horizontal_scroll()
    staff.shot("pool-form")
    staff.submit()
    saved(staff)
    pool = QuestPool.objects.get(key="daily-pick")
    assert [m["weight"] for m in pool.members] == [2, 1]

    # Writers send words with the official SDK (quests added to the pool today wait for the
    # users' next day: today everyone has both, as everyone's quests until now).
    client = make_client(org.admin_key)
    for user, words in (("alice", 120), ("bob", 40), ("chloe", 300)):
        client.metrics.event(
            key="words", user=UpsertedUser(id=user, name=user.title()), value=words
        )
    assert QuestProgress.objects.filter(quest=quest, completed_at__isnull=False).count() == 2

    staff.go("/dashboard/quests/quest/")
    row = next(r.text for r in staff.all("#result_list tbody tr") if "Write 100 words" in r.text)
    assert "67%" in row, row  # 2 of 3 users
    assert "20" in row  # 2 x 10 points paid
    assert staff.no_horizontal_scroll()
    staff.shot("quest-list")

    staff.go(f"/dashboard/quests/quest/{quest.pk}/change/")
    periods = [r.text for r in staff.all("#quest-analytics tbody tr")]
    assert len(periods) == 1
    assert " 3 2 67% " in f" {periods[0]} ", periods
    assert staff.no_horizontal_scroll()
    staff.shot("quest-page")

    alice = EndUser.objects.get(external_id="alice")
    staff.go(f"/dashboard/users/enduser/{alice.pk}/change/")
    card = staff.text("#user-quests")
    assert "Write 100 words" in card
    assert "120 / 100 words" in card
    staff.driver.execute_script("document.getElementById('user-quests').scrollIntoView()")
    assert staff.no_horizontal_scroll()
    staff.shot("user-quests", full_page=False)
