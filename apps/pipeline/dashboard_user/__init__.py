"""The end-user page of the dashboard, composed by the pipeline (the layer above every feature
app): metrics with their last 30 days, the streak and its calendar, points, achievements,
leaderboard ranks, notifications, leagues and quests, plus the actions staff take on a user
(reset, restore, freeze or pause the streak; complete an API achievement; undo events; exclude
from the rankings or reinstate), each confirmed on its own page and carried out by the service
the API uses; and the end-user list's level, streak and last-active columns.

apps.users.admin.EndUserAdmin shows the cards and serves the action pages through its hooks;
importing this package fills them (apps.pipeline.admin imports it).
"""

from apps.metrics.selectors import latest_event_at
from apps.pipeline.dashboard_user.actions import action_urls
from apps.pipeline.dashboard_user.columns import COLUMNS
from apps.pipeline.dashboard_user.fairplay import fairplay_card, fairplay_urls
from apps.pipeline.dashboard_user.leagues import league_cards
from apps.pipeline.dashboard_user.page import end_user_cards
from apps.pipeline.dashboard_user.quests import quest_cards
from apps.pipeline.dashboard_user.undo import undo_cards, undo_urls
from apps.users.end_user_page import (
    END_USER_CARDS,
    END_USER_COLUMNS,
    END_USER_LATEST_EVENT,
    END_USER_URLS,
)

END_USER_CARDS.append(end_user_cards)
END_USER_CARDS.append(league_cards)
END_USER_CARDS.append(quest_cards)
END_USER_CARDS.append(undo_cards)
END_USER_URLS.append(action_urls)
END_USER_URLS.append(undo_urls)
END_USER_CARDS.append(fairplay_card)
END_USER_URLS.append(fairplay_urls)
END_USER_COLUMNS.extend(COLUMNS)
END_USER_LATEST_EVENT.append(latest_event_at)
